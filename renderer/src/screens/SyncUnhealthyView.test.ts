// Why sync is unhealthy, read from the site's sync view (core/site syncView `problems`), not from
// whichever sync_stalled alarm the status happens to hold: the Sync screen's sentence and the
// header's chip. A PC HQ refuses (another PC holds the site's sender marker) is "online" — HQ
// answers — and the chip said "Online" beside the alarm; it now says HQ refuses it, in each
// language. Rendered to markup (no browser).
import { createElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import type { Alarm, SiteApi, SiteStatus, SyncStatus } from '../../../core/site/api.ts';
import { App } from '../App.tsx';
import { StoreContext } from '../context.tsx';
import type { Lang } from '../i18n/messages.ts';
import { createAppStore } from '../store/store.ts';
import { Sync } from './Sync.tsx';

const base: SyncStatus = {
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
  lastError: 'HQ’s site_demo.db/ belongs to another sender: other-pc',
};

/** The view as the site sends it. */
const view = (over: Partial<SyncStatus>, problems: string[]): SyncStatus => ({ ...base, ...over, problems });
const stalled = (reason: string): Alarm => ({ kind: 'sync_stalled', message: '…', sinceMs: 0, params: { pending: 2, reason, windowMs: base.windowMs } });

function status(sync: SyncStatus, alarms: Alarm[] = []): SiteStatus {
  return { siteId: 'demo', nowMs: 0, tables: [], streams: [], alarms, sync, proposals: { open: 0, deferred: 0, oldestOpenMs: null }, ui: { idleSignOutMs: 0 } } as unknown as SiteStatus;
}

function renderSync(sync: SyncStatus, alarms: Alarm[] = [], lang: Lang = 'en'): string {
  const store = createAppStore({} as SiteApi);
  store.setState({ sync, lang, status: status(sync, alarms) });
  // Server rendering reads the store's server snapshot, which is its initial state.
  store.getInitialState = store.getState;
  return renderToStaticMarkup(createElement(StoreContext.Provider, { value: store }, createElement(Sync)));
}

/** The whole page signed in, on the Sync screen (no sync loaded there: the header alone is read). */
function chip(sync: SyncStatus, lang: Lang = 'en'): string {
  const store = createAppStore({} as SiteApi);
  store.setState({ firstRun: { initialized: true, siteId: 'demo' } as never, user: { name: 'Kari', roles: ['viewer'] }, screen: 'sync', lang, status: status(sync) });
  store.getInitialState = store.getState;
  const html = renderToStaticMarkup(createElement(StoreContext.Provider, { value: store }, createElement(App)));
  // The chip after the freshness chip (found by place, not by its test id, so the page before the
  // chip was its own component is read the same way).
  const m = /data-testid="freshness">[^<]*<\/span><span class="chip ([^"]*)"[^>]*>([^<]*)<\/span>/.exec(html);
  expect(m, html).not.toBeNull();
  return `${m![1]!.trim() === 'chip-alert' ? '[alert] ' : ''}${m![2]}`;
}

describe('Sync screen: the reason is the view’s', () => {
  it('says the view’s first problem with no alarm in the status', () => {
    expect(renderSync(view({}, ['step', 'waiting']))).toContain('⚠ NOT HEALTHY — One step has failed for 15 mins or more');
    expect(renderSync(view({}, ['refused']), [], 'de')).toContain('⚠ NICHT IN ORDNUNG — Die Zentrale weist diesen PC ab');
    expect(renderSync(view({ online: false }, ['credentials']), [], 'nb')).toContain('IKKE I ORDEN — Hovedkontoret avviser anleggets tilgangsnøkkel');
  });

  it('the view, not a stale alarm from an earlier status', () => {
    const html = renderSync(view({}, ['refused']), [stalled('waiting')]);
    expect(html).toContain('NOT HEALTHY — Headquarters refuses this PC');
    expect(html).not.toContain('nothing reached headquarters');
    // Healthy by the view: no headline, whatever the alarm still says.
    expect(renderSync(view({ healthy: true, lastError: null }, []), [stalled('refused')])).not.toContain('NOT HEALTHY');
  });

  it('a problem of a newer site, or none: the headline alone', () => {
    expect(renderSync(view({}, ['quota']))).toContain('<p class="alert sync-stalled">⚠ NOT HEALTHY</p>');
    // An older site's view without problems.
    expect(renderSync(base)).toContain('<p class="alert sync-stalled">⚠ NOT HEALTHY</p>');
  });
});

describe('header chip', () => {
  it('a refused PC: refused by HQ, as an alert, in each language — not "Online"', () => {
    const refused = view({ online: true }, ['refused']);
    expect(chip(refused)).toBe('[alert] ⚠ REFUSED BY HQ');
    expect(chip(refused, 'nb')).toBe('[alert] ⚠ AVVIST AV HOVEDKONTORET');
    expect(chip(refused, 'de')).toBe('[alert] ⚠ VON DER ZENTRALE ABGEWIESEN');
    // Waiting for the line mends no refusal: it stays first when the line is down too.
    expect(chip(view({ online: false }, ['refused', 'waiting']))).toBe('[alert] ⚠ REFUSED BY HQ');
    // HQ refusing the site's access key (S3 403): the engine counts the line as down, and the chip
    // says refused, not OFFLINE.
    expect(chip(view({ online: false }, ['credentials']))).toBe('[alert] ⚠ REFUSED BY HQ');
  });

  it('online but not healthy otherwise (one step or a table failing, a reason it does not know): says so', () => {
    for (const problems of [['step'], ['planning'], ['quota'], []]) expect(chip(view({ online: true }, problems))).toBe('[alert] ⚠ Sync: NOT HEALTHY');
    expect(chip(view({ online: true }, ['step']), 'nb')).toBe('[alert] ⚠ Synkronisering: IKKE I ORDEN');
    expect(chip(view({ online: true }, ['step']), 'de')).toBe('[alert] ⚠ Synchronisation: NICHT IN ORDNUNG');
  });

  it('offline, healthy and not configured read as before', () => {
    expect(chip(view({ online: false }, ['waiting']))).toBe('[alert] ⚠ OFFLINE');
    expect(chip(view({ online: false, healthy: true }, []))).toBe('[alert] ⚠ OFFLINE');
    expect(chip(view({ online: true, healthy: true, lastError: null }, []))).toBe('Online');
    expect(chip(view({ online: true, healthy: true, lastError: null }, []), 'de')).toBe('Verbunden');
    expect(chip({ ...base, configured: false, target: null, healthy: true })).toBe('Sync: –');
  });
});
