// The Tables screen rendered from the store's state (server-side markup, no browser): a stream
// whose later events wait behind missing seqs says which, and for how long, in each language; a
// stream without a gap says nothing of one; a table's age against its budget follows what the site
// pushes while the screen stays open.
import { createElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import type { SiteApi, SiteStatus, StreamView, TableInfo } from '../../../core/site/api.ts';
import { StoreContext } from '../context.tsx';
import { createAppStore, type AppStore } from '../store/store.ts';
import { Tables } from './Tables.tsx';

const NOW = Date.UTC(2026, 11, 3, 12, 0);

function markup(store: AppStore): string {
  store.getInitialState = store.getState;
  return renderToStaticMarkup(createElement(StoreContext.Provider, { value: store }, createElement(Tables)));
}

function render(streams: StreamView[], lang: 'en' | 'nb' | 'de' = 'en'): string {
  const store = createAppStore({} as SiteApi);
  const status = { siteId: 'dc1', nowMs: NOW, streams, tables: [], alarms: [], deadLetters: 0 } as unknown as SiteStatus;
  store.setState({ status, tables: [], lang });
  return markup(store);
}

const stream = (o: Partial<StreamView>): StreamView => ({
  stream: 'inventory/stock', lastEventMs: NOW - 5_000, lastSeq: 1_207, clockAheadMs: -20, appliedSeq: 1_202, gap: null, silentAllowedMs: 600_000, silent: false, ...o,
});

describe('Tables screen: module streams', () => {
  it('says which seqs a stream waits for, and since when, in each language', () => {
    const gap = { from: 1_203, to: 1_205, sinceMs: NOW - 180_000, skipAtMs: NOW + 120_000 };
    expect(render([stream({ gap })])).toContain('seq 1,203–1,205 missing for 3 mins: asked for again');
    expect(render([stream({ gap })], 'nb')).toMatch(/seq 1[\s\u00a0]203–1[\s\u00a0]205 mangler i 3 min: bedt om på nytt/);
    expect(render([stream({ gap })], 'de')).toContain('Seq 1.203–1.205 fehlt seit 3 Min.: erneut angefordert');
  });

  it('says nothing of a gap when nothing is held', () => {
    const html = render([stream({})]);
    expect(html).toContain('inventory/stock');
    expect(html).not.toContain('missing for');
  });
});

describe('Tables screen: freshness while it stays open', () => {
  const flush = async () => {
    for (let i = 0; i < 20; i++) await Promise.resolve();
  };
  const info = (ageMs: number): TableInfo => ({
    table: 'stock', budgetMs: 5_000, decision: 'replenish', confirmedBy: 'ops', ageMs, pendingEvents: ageMs > 5_000 ? 40 : 0,
    lastCommitMs: 1, snapshotId: 3, breaches: ageMs > 5_000 ? 1 : 0, withinBudget: ageMs <= 5_000, snapshots: 3, tags: 0, bytes: 10, compactionDebt: 0,
  });

  // The site pushes a status every 5 s and a `tables` event on every commit; the header's chip
  // followed them while the screen's rows kept the age read when it was opened.
  it('does not keep showing a table as within budget after the site said it is over budget', async () => {
    let truth = info(1_000);
    const api = new Proxy({} as SiteApi, {
      get(_t, m: string) {
        if (m === 'tables') return async () => [truth];
        if (m === 'status') return async () => ({ siteId: 'dc1', nowMs: 1, tables: [truth], streams: [], alarms: [], deadLetters: 0 });
        return async () => [];
      },
    });
    const store = createAppStore(api);
    store.setState({ user: { name: 'Kari', roles: ['shift_lead'] } });
    store.getState().go('tables');
    await flush();
    expect(store.getState().tables[0]!.withinBudget).toBe(true);

    // A minute later the stock table is 60 s old against its 5 s budget; the site says so.
    truth = info(60_000);
    const status = { siteId: 'dc1', nowMs: 60_000, tables: [truth], streams: [], alarms: [], deadLetters: 0 } as unknown as SiteStatus;
    store.getState().applyEvent({ type: 'status', status });
    store.getState().applyEvent({ type: 'tables', tables: ['stock'] });
    await flush();

    const row = /<tr[^>]*data-table="stock"[^>]*>.*?<\/tr>/s.exec(markup(store))![0];
    expect(row).toContain('OVER BUDGET');
    expect(row).not.toContain('within budget');
  });
});

describe('a table over its budget', () => {
  it('shows its age so that it does not read as the budget (90 s against 60 s is not "1 min" against "1 min")', () => {
    const store = createAppStore({} as SiteApi);
    const row: TableInfo = {
      table: 'work_queue', budgetMs: 60_000, decision: 'the agent runs every minute', confirmedBy: 'ops', ageMs: 90_000, pendingEvents: 3, lastCommitMs: NOW - 90_000,
      snapshotId: 4, breaches: 1, withinBudget: false, snapshots: 4, tags: 0, bytes: 10, compactionDebt: 0,
    };
    store.setState({ status: { siteId: 'dc1', nowMs: NOW, streams: [], tables: [row], alarms: [], deadLetters: 0 } as unknown as SiteStatus, tables: [row], lang: 'en' });
    const cells = [.../<tr[^>]*data-table="work_queue"[^>]*>(.*?)<\/tr>/s.exec(markup(store))![1]!.matchAll(/<td class="num">(.*?)<\/td>/g)].map((m) => m[1]);
    expect(cells.slice(0, 2)).toEqual(['1 min 30 secs', '1 min']);
  });
});
