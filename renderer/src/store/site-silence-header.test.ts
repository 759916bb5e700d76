// What the header and the Tables screen show while the site does not answer (site-silence.test.ts:
// the store's side): "no word from the site since HH:MM:SS" (this PC's time zone), the freshness
// chip over budget once a grown age passes its budget — it said "● within budget" —, the sync chip
// not "Online", the table's age grown; and all of it as before once a status comes. Server-side
// markup of the real App and Tables screen, in en, nb and de.
import { createElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import type { SiteApi, SiteStatus, TableFreshness, TableInfo } from '../../../core/site/api.ts';
import { App } from '../App.tsx';
import { StoreContext } from '../context.tsx';
import { Tables } from '../screens/Tables.tsx';
import { inTimeZone } from '../testing/time-zone.ts';
import { createAppStore, type AppStore } from './store.ts';

inTimeZone('Europe/Oslo');

const AT = Date.UTC(2026, 11, 6, 8, 0, 5); // 09:00:05 in Oslo
const fresh = (ageMs: number): TableFreshness => ({
  table: 'stock', budgetMs: 10_000, decision: 'replenish', confirmedBy: 'ops', ageMs, pendingEvents: 0, lastCommitMs: AT - ageMs, snapshotId: 3, breaches: 0, withinBudget: ageMs <= 10_000, fed: true,
});
const status = (nowMs: number, ageMs: number) =>
  ({
    siteId: 'osl1', nowMs, statusEveryMs: 5_000, alarms: [], tables: [fresh(ageMs)], streams: [], deadLetters: 0, proposals: { open: 0, deferred: 0, oldestOpenMs: null }, ui: { idleSignOutMs: 0 },
    sync: { configured: true, target: '/hq', online: true, healthy: true, problems: [], pendingItems: 0, pendingBytes: 0, recentItems: 0, recentBytes: 0, windowMs: 900_000, lastSuccessMs: AT, oldestUnsyncedMs: null, lastError: null },
  }) as unknown as SiteStatus;

function html(store: AppStore, component: () => unknown): string {
  store.getInitialState = store.getState;
  return renderToStaticMarkup(createElement(StoreContext.Provider, { value: store }, createElement(component as () => null)));
}
const text = (markup: string, testId: string): string | undefined =>
  new RegExp(`data-testid="${testId}"[^>]*>(.*?)</span>`).exec(markup)?.[1]?.replace(/<[^>]+>/g, '');

describe('the header and the Tables screen while the site does not answer', () => {
  it('say so, with the time of the last word, and show the ages grown; back as they were with the next status', async () => {
    const clock = { mono: 0, wall: AT };
    const api = { status: async () => status(AT, 2_000), tables: async () => [] as TableInfo[], listProposals: async () => [] } as unknown as SiteApi;
    const store = createAppStore(api, undefined, { mono: () => clock.mono, wall: () => clock.wall });
    store.setState({ firstRun: { initialized: true, siteId: 'osl1' } as never, user: { name: 'Kari', roles: ['shift_lead'] }, lang: 'en' });
    await store.getState().loadStatus();
    store.setState({ tables: [{ ...fresh(2_000), snapshots: 3, tags: 0, bytes: 10, compactionDebt: 0 }] });
    let page = html(store, App);
    expect(text(page, 'freshness')).toBe('● within budget');
    expect(text(page, 'sync-chip')).toBe('Online');
    expect(text(page, 'site-quiet')).toBeUndefined();

    clock.mono += 20_000;
    clock.wall += 20_000;
    store.getState().checkSite();
    page = html(store, App);
    expect(text(page, 'site-quiet')).toBe('⚠ No word from the site since 09:00:05');
    // 2 s + 20 s: past the 10 s budget.
    expect(text(page, 'freshness')).toBe('⚠ 1 OVER BUDGET');
    expect(text(page, 'sync-chip')).toBe('⚠ Sync: not known');
    expect(html(store, Tables)).toContain('22 secs');
    store.setState({ lang: 'nb' });
    page = html(store, App);
    expect(text(page, 'site-quiet')).toBe('⚠ Ikke noe svar fra stedet siden 09:00:05');
    expect(text(page, 'sync-chip')).toBe('⚠ Synkronisering: ukjent');
    store.setState({ lang: 'de' });
    expect(text(html(store, App), 'site-quiet')).toBe('⚠ Keine Antwort vom Standort seit 09:00:05');

    // The site speaks again.
    store.setState({ lang: 'en' });
    store.getState().applyEvent({ type: 'status', status: status(AT + 21_000, 1_000) });
    page = html(store, App);
    expect(text(page, 'site-quiet')).toBeUndefined();
    expect(text(page, 'freshness')).toBe('● within budget');
    expect(text(page, 'sync-chip')).toBe('Online');
  });
});

describe('the header before the first status of a session', () => {
  it('says nothing of the freshness ("…", not "● within budget") until a status comes', async () => {
    let answer: (s: SiteStatus) => void = () => {};
    const api = { status: () => new Promise<SiteStatus>((r) => (answer = r)), listProposals: async () => [] } as unknown as SiteApi;
    const store = createAppStore(api);
    store.setState({ firstRun: { initialized: true, siteId: 'osl1' } as never, user: { name: 'Kari', roles: ['shift_lead'] }, lang: 'en' });
    const read = store.getState().loadStatus();
    for (const lang of ['en', 'nb', 'de'] as const) {
      store.setState({ lang });
      const chip = text(html(store, App), 'freshness');
      expect(chip, lang).toBe('…');
    }
    store.setState({ lang: 'en' });
    answer(status(AT, 2_000));
    await read;
    expect(text(html(store, App), 'freshness')).toBe('● within budget');
  });
});
