// The screens with long lists (a 500-row work queue, stock or history read) rendered from the
// store's state (server-side markup, no browser): a render formats thousands of cells, and each
// Intl formatter costs some 0.03–0.15 ms to make — one per cell made a screen re-rendered at every
// keystroke of its search box take a good part of a second on a floor PC. The formatters are made
// once per language and form.
import { createElement, type FunctionComponent } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { afterEach, describe, expect, it } from 'vitest';
import type { HistoryResult, JobView, SiteApi, SiteStatus, StockView } from '../../../core/site/api.ts';
import { StoreContext } from '../context.tsx';
import { createAppStore, type AppState } from '../store/store.ts';
import { History } from './History.tsx';
import { Stock } from './Stock.tsx';
import { WorkQueue } from './WorkQueue.tsx';

const ROWS = 500;

function render(screen: FunctionComponent, state: Partial<AppState>): string {
  const store = createAppStore({} as SiteApi);
  store.setState({ lang: 'nb', ...state });
  store.getInitialState = store.getState;
  return renderToStaticMarkup(createElement(StoreContext.Provider, { value: store }, createElement(screen)));
}

const real = { NumberFormat: Intl.NumberFormat, DateTimeFormat: Intl.DateTimeFormat };
/** Counts the Intl formatters made from here on. */
function countFormatters(): { made: () => number } {
  let made = 0;
  const counted = <T extends object>(c: T): T =>
    new Proxy(c, {
      construct(target, args) {
        made++;
        return Reflect.construct(target as new (...a: unknown[]) => object, args) as object;
      },
    });
  Object.assign(Intl, { NumberFormat: counted(real.NumberFormat), DateTimeFormat: counted(real.DateTimeFormat) });
  return { made: () => made };
}

afterEach(() => {
  Object.assign(Intl, real);
});

const jobs: JobView[] = Array.from({ length: ROWS }, (_, i) => ({
  job_id: `J-${i}`, status: 'released', blocked_reason: null, capability: 'pick', material_item: null, material_qty: null, priority: 1,
  due_at: `2026-12-02T09:${String(i % 60).padStart(2, '0')}:13.017`, assigned_resource: null,
}));
const stock: StockView[] = Array.from({ length: ROWS }, (_, i) => ({
  item: `ITEM-${i}`, location: 'A-01', on_hand: 30 + i, reserved: 4, inbound: 0, available: 26 + i, projected: 26 + i, reorder_point: 5, order_up_to: 20,
  reorder_scope: 'default', reorder_set: null, item_policy: null, below_reorder_point: false, waiting: [],
}));
const history: HistoryResult = {
  table: 'work_queue', snapshotId: 7, snapshotMs: Date.UTC(2026, 11, 2), columns: ['job_id', 'due_at', 'updated_at'], types: ['STRING', 'TIMESTAMP(3)', 'TIMESTAMP(3)'],
  rows: jobs.map((j) => [j.job_id, j.due_at, j.due_at]), more: false,
};

describe('long lists', () => {
  it('formats a 500-row work queue, stock and history read with a handful of formatters, not one per cell', () => {
    const c = countFormatters();
    const work = render(WorkQueue, { jobs, status: { nowMs: Date.UTC(2026, 11, 2, 12) } as SiteStatus });
    expect(work.match(/data-job=/g)).toHaveLength(ROWS);
    const rows = render(Stock, { stock });
    expect(rows.match(/ITEM-\d+<\/td>/g)).toHaveLength(ROWS);
    const read = render(History, { history, tables: [], tags: [] });
    expect(read.match(/<tr>/g)!.length).toBeGreaterThanOrEqual(ROWS);
    // Every one of them rendered again (a keystroke in the search box) makes none.
    const first = c.made();
    render(WorkQueue, { jobs, status: { nowMs: Date.UTC(2026, 11, 2, 12) } as SiteStatus });
    render(Stock, { stock });
    render(History, { history, tables: [], tags: [] });
    expect(first).toBeLessThan(20);
    expect(c.made()).toBe(first);
  });
});
