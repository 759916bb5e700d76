// A tag deleted on the site before it reached HQ is dropped, not sent (core/sync); the site's sync
// view lists it for a day (core/site syncView `dropped`: table, tag, when, kind). The Sync screen
// says so in the floor's words, in each language — an analyst at HQ will look for the tag, and the
// operator can tell why it is not there. Not a health problem: no "not healthy", no alert. Before,
// the screen said nothing of it.
import { createElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import type { SiteApi, SiteStatus, SyncDropped, SyncStatus } from '../../../core/site/api.ts';
import { StoreContext } from '../context.tsx';
import { createAppStore } from '../store/store.ts';
import { inTimeZone } from '../testing/time-zone.ts';
import { Sync } from './Sync.tsx';

inTimeZone('Europe/Oslo');

const AT = Date.UTC(2026, 11, 1, 9, 30, 5);
const WHY = 'dropped, not sent: tag baseline of stock was deleted on the site before it reached HQ';

const sync: SyncStatus = {
  configured: true,
  target: '/mnt/hq',
  online: true,
  pendingItems: 0,
  pendingBytes: 0,
  oldestUnsyncedMs: null,
  lastSuccessMs: Date.UTC(2026, 11, 1, 9, 40),
  current: null,
  recentItems: 3,
  recentBytes: 4_000,
  windowMs: 15 * 60_000,
  healthy: true,
  problems: [],
  lastError: null,
  dropped: [{ table: 'stock', tag: 'baseline', kind: 'deleted', atMs: AT, why: WHY }],
};

function render(lang: 'en' | 'nb' | 'de', s: SyncStatus = sync): string {
  const store = createAppStore({} as SiteApi);
  store.setState({ sync: s, lang, status: { alarms: [] } as unknown as SiteStatus });
  // Server rendering reads the store's server snapshot, which is its initial state.
  store.getInitialState = store.getState;
  return renderToStaticMarkup(createElement(StoreContext.Provider, { value: store }, createElement(Sync)));
}

describe('Sync screen: a tag dropped before it reached headquarters', () => {
  it('en: the tag, its table, when, and why in words; healthy stays healthy', () => {
    const html = render('en');
    expect(html).toContain('Not sent to headquarters');
    expect(html).toContain('Tag baseline of table stock was deleted on the site before it reached headquarters, so it was not sent (dropped 01/12/2026, 10:30:05). Headquarters will not have it.');
    expect(html).not.toContain('NOT HEALTHY');
    expect(html).not.toContain(WHY);
  });

  it('nb', () => {
    const html = render('nb');
    expect(html).toContain('Ikke sendt til hovedkontoret');
    expect(html).toContain('Merket baseline i tabellen stock ble slettet på anlegget før det nådde hovedkontoret, så det ble ikke sendt (forkastet 01.12.2026, 10:30:05). Hovedkontoret vil ikke ha det.');
    expect(html).not.toContain(WHY);
  });

  it('de', () => {
    const html = render('de');
    expect(html).toContain('Nicht an die Zentrale gesendet');
    expect(html).toContain('Tag baseline der Tabelle stock wurde am Standort gelöscht, bevor er die Zentrale erreichte, und deshalb nicht gesendet (verworfen 01.12.2026, 10:30:05). Die Zentrale wird ihn nicht haben.');
    expect(html).not.toContain(WHY);
  });

  it('a kind of a newer site: said not sent, with the site’s own reason', () => {
    const newer = { table: 'stock', tag: 'audit', kind: 'quota', atMs: AT, why: 'dropped: HQ quota' } as unknown as SyncDropped;
    const html = render('de', { ...sync, dropped: [newer] });
    expect(html).toContain('Tag audit der Tabelle stock wurde nicht an die Zentrale gesendet (verworfen 01.12.2026, 10:30:05): dropped: HQ quota');
  });

  it('none dropped, or an older site without the field: nothing said', () => {
    const { dropped: _, ...older } = sync;
    for (const s of [{ ...sync, dropped: [] }, older]) {
      const html = render('en', s);
      expect(html).not.toContain('Not sent to headquarters');
      expect(html).not.toContain('sync-dropped');
    }
  });
});
