// The Sync screen says "not healthy" and why, not "nothing reached headquarters" whatever the
// cause: the reason is the sync view's first problem (core/site syncView `problems`, also the
// sync_stalled alarm's params.reason), worded in each language; without one the headline stands
// alone beside the last error.
import { createElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import type { SiteApi, SiteStatus, SyncStatus } from '../../../core/site/api.ts';
import { StoreContext } from '../context.tsx';
import { createAppStore } from '../store/store.ts';
import { Sync } from './Sync.tsx';

const REFUSAL =
  "HQ's site_demo.db/ belongs to another sender: other-pc on spare (/srv/tilstand), since 2026-12-01T00:00:00.000Z (restore); this data directory (/var/lib/tilstand) is sender a1. Nothing is sent to or removed at HQ.";

const sync: SyncStatus = {
  configured: true,
  target: '/mnt/hq',
  online: true,
  pendingItems: 2,
  pendingBytes: 4_000,
  oldestUnsyncedMs: 60_000,
  lastSuccessMs: Date.UTC(2026, 11, 1, 9, 30),
  current: null,
  recentItems: 0,
  recentBytes: 0,
  windowMs: 15 * 60_000,
  healthy: false,
  lastError: REFUSAL,
};

function render(reason: string | undefined, lang: 'en' | 'nb' | 'de' = 'en', s: SyncStatus = sync): string {
  const store = createAppStore({} as SiteApi);
  // The view's problems (api.ts's SyncStatus does not declare them yet); no alarm in the status.
  const view = { ...s, problems: reason === undefined || s.healthy ? [] : [reason] } as SyncStatus;
  store.setState({ sync: view, lang, status: { alarms: [] } as unknown as SiteStatus });
  // Server rendering reads the store's server snapshot, which is its initial state.
  store.getInitialState = store.getState;
  return renderToStaticMarkup(createElement(StoreContext.Provider, { value: store }, createElement(Sync)));
}

describe('Sync screen: why sync is not healthy', () => {
  it('a refused PC: another PC sends for this site, what to do, and the refusal itself', () => {
    const en = render('refused');
    expect(en).toContain('⚠ NOT HEALTHY — Headquarters refuses this PC: another PC sends for this site.');
    expect(en).toContain('Two PCs for one site');
    expect(en).toContain(`Last error: <code>${REFUSAL.replace(/'/g, '&#x27;')}</code>`);
    expect(en).not.toMatch(/STALLED|nothing reached headquarters/);
    expect(render('refused', 'nb')).toContain('⚠ IKKE I ORDEN — Hovedkontoret avviser denne PC-en: en annen PC sender for dette anlegget.');
    expect(render('refused', 'de')).toContain('⚠ NICHT IN ORDNUNG — Die Zentrale weist diesen PC ab: ein anderer PC sendet für diesen Standort.');
  });

  it('one step failing, a table left out, steps waiting: each in words, with the window', () => {
    expect(render('step')).toContain('NOT HEALTHY — One step has failed for 15 mins or more while headquarters took other requests');
    expect(render('step', 'nb')).toContain('IKKE I ORDEN — Ett steg har feilet i 15 min eller mer mens hovedkontoret tok imot andre forespørsler');
    expect(render('planning', 'de')).toContain('NICHT IN ORDNUNG — Eine Tabelle oder Vertragsdatei wird seit 15 Min. oder länger nicht gesendet');
    expect(render('waiting')).toContain('NOT HEALTHY — Steps have waited 15 mins or more and nothing reached headquarters.');
  });

  it('no reason from the site (or one it does not know): the headline and the last error, nothing guessed', () => {
    for (const reason of [undefined, 'newer']) {
      const html = render(reason);
      expect(html).toContain('<p class="alert sync-stalled">⚠ NOT HEALTHY</p>');
      expect(html).toContain('Last error: <code>');
      expect(html).not.toContain('nothing reached headquarters');
    }
  });

  it('healthy: no headline', () => {
    const html = render('waiting', 'en', { ...sync, healthy: true, lastError: null });
    expect(html).not.toContain('NOT HEALTHY');
    expect(html).not.toContain('sync-stalled');
  });
});
