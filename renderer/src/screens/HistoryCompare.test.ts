// The History screen's comparison and column order (server-side markup, no browser): an update's
// changed cells are marked in its before and after — the whole row was coloured, so a shift lead
// could not see which value changed —, an added or removed row keeps its row-level mark; a
// sequence column's change is not marked (a walk found all three of stock's boxed on almost every
// pair, so a change in on hand did not stand out), and an update that moved only them says so; the
// key columns come first and the sequence columns last, as the inbox's evidence shows them, by the
// site API's `keyColumns` and `sequenceColumns` (an older site without them: the stored order).
import { createElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import type { DiffResult, HistoryResult, SiteApi } from '../../../core/site/api.ts';
import { StoreContext } from '../context.tsx';
import { createAppStore, type AppState } from '../store/store.ts';
import { changedCells, columnOrder, History } from './History.tsx';

const T = Date.UTC(2026, 11, 3, 6, 0, 5);

function render(state: Partial<AppState>): string {
  const store = createAppStore({} as SiteApi);
  store.setState({ tables: [], tags: [], lang: 'en', history: null, diff: null, ...state });
  store.getInitialState = store.getState; // what server-side rendering reads
  return renderToStaticMarkup(createElement(StoreContext.Provider, { value: store }, createElement(History)));
}

/** The stored names of the headed columns (each heading's title), the change column as its heading. */
const stored = (html: string): string[] => [...html.matchAll(/<th scope="col"(?: title="([^"]*)")?>([^<]*)<\/th>/g)].map((m) => m[1] ?? m[2]!);

/** Each body row as its class and its cells, a marked cell as `[text]`. */
const rows = (html: string): { cls: string; cells: string[] }[] =>
  [...html.matchAll(/<tr(?: class="([^"]*)")?>(.*?)<\/tr>/g)]
    .filter((m) => m[2]!.startsWith('<td'))
    .map((m) => ({
      cls: m[1] ?? '',
      cells: [...m[2]!.matchAll(/<td([^>]*)>(.*?)<\/td>/g)].map((c) => {
        const text = c[2]!.replace(/<[^>]+>/g, '');
        return /class="(?:[^"]*\s)?changed(?:\s[^"]*)?"/.test(c[1]!) ? `[${text}]` : text;
      }),
    }));

// Stock as stored: each module's sequence column after the column it orders.
const COLUMNS = ['item', 'location', 'on_hand', 'inventory_seq', 'reserved', 'commerce_seq', 'inbound', 'procurement_seq'];
const TYPES = ['STRING NOT NULL', 'STRING NOT NULL', 'INT', 'BIGINT', 'INT', 'BIGINT', 'INT', 'BIGINT'];
const ROLES = { keyColumns: ['item', 'location'], sequenceColumns: ['inventory_seq', 'commerce_seq', 'procurement_seq'] };

const diff = (o: Partial<DiffResult> = {}): DiffResult => ({
  table: 'stock', from: { snapshotId: 41, snapshotMs: T }, to: { snapshotId: 57, snapshotMs: T }, more: false, columns: COLUMNS, types: TYPES,
  changes: [
    { kind: '-U', row: ['ITEM-001', 'A-01', 12, 4, 2, 1, 0, 1] },
    { kind: '+U', row: ['ITEM-001', 'A-01', 9, 5, 2, 1, 0, 1] },
    { kind: '+I', row: ['ITEM-002', 'A-01', 3, 1, 0, 1, 5, 1] },
    { kind: '-D', row: ['ITEM-003', 'B-02', 0, 7, 0, 1, 0, 1] },
  ],
  ...ROLES,
  ...o,
});

describe('History: what a comparison marks', () => {
  it("marks an update's changed cells in its before and after, and added and removed rows as a whole", () => {
    expect(rows(render({ diff: diff() }))).toEqual([
      { cls: 'change change-before', cells: ['before', 'ITEM-001', 'A-01', '[12]', '2', '0', '4', '1', '1'] },
      { cls: 'change change-after', cells: ['after', 'ITEM-001', 'A-01', '[9]', '2', '0', '5', '1', '1'] },
      { cls: 'change change-plus', cells: ['added', 'ITEM-002', 'A-01', '3', '0', '5', '1', '1', '1'] },
      { cls: 'change change-minus', cells: ['removed', 'ITEM-003', 'B-02', '0', '0', '0', '7', '1', '1'] },
    ]);
  });

  it('pairs a before with the after of the same key only, and marks nothing of one left alone', () => {
    const changes: DiffResult['changes'] = [
      { kind: '-U', row: ['ITEM-001', 'A-01', 12, 4, 2, 1, 0, 1] },
      { kind: '+U', row: ['ITEM-009', 'A-01', 9, 5, 2, 1, 0, 1] },
      { kind: '+U', row: ['ITEM-004', 'A-01', 1, 2, 0, 1, 0, 1] },
    ];
    const cells = (c: ReturnType<typeof changedCells>) => c.map((s) => [...s.cells]);
    expect(cells(changedCells(changes, ROLES.keyColumns, COLUMNS))).toEqual([[], [], []]);
    // An older site names no key nor sequence columns: a before and the after that follows it are one update (the site keeps them together), every changed cell marked.
    expect(cells(changedCells(changes.slice(0, 2), undefined, COLUMNS))).toEqual([[0, 2, 3], [0, 2, 3]]);
    // Nested values compared as values, not as objects.
    expect(cells(changedCells([{ kind: '-U', row: ['a', { x: [1] }] }, { kind: '+U', row: ['a', { x: [1] }] }], ['k'], ['k', 'v']))).toEqual([[], []]);
  });
});

describe("History: a comparison's sequence columns", () => {
  it('marks no sequence column, and says of an update that moved only them that it did, in its word, muted', () => {
    const changes: DiffResult['changes'] = [
      // reserved 2 → 4, and all three modules' numbers moved: only reserved is marked.
      { kind: '-U', row: ['ITEM-001', 'A-01', 12, 4, 2, 1, 0, 1] },
      { kind: '+U', row: ['ITEM-001', 'A-01', 12, 9, 4, 8, 0, 3] },
      // The module sent the row again with the same values: only its number moved.
      { kind: '-U', row: ['ITEM-002', 'B-01', 5, 4, 0, 1, 0, 1] },
      { kind: '+U', row: ['ITEM-002', 'B-01', 5, 6, 0, 1, 0, 1] },
    ];
    const html = render({ diff: diff({ changes }) });
    expect(rows(html)).toEqual([
      { cls: 'change change-before', cells: ['before', 'ITEM-001', 'A-01', '12', '[2]', '0', '4', '1', '1'] },
      { cls: 'change change-after', cells: ['after', 'ITEM-001', 'A-01', '12', '[4]', '0', '9', '8', '3'] },
      { cls: 'change change-before change-sequence-only', cells: ['before seq. no. only', 'ITEM-002', 'B-01', '5', '0', '0', '4', '1', '1'] },
      { cls: 'change change-after change-sequence-only', cells: ['after seq. no. only', 'ITEM-002', 'B-01', '5', '0', '0', '6', '1', '1'] },
    ]);
    // The word stays the change's (the mark on hover, as before), the note beside it, explained on hover.
    expect(html).toContain('<td class="change-kind" data-kind="+U" title="+U">after<span class="sequence-only small" title="Only the modules’ sequence numbers changed: the row came again with the same values."> seq. no. only</span></td>');
    expect(changedCells(changes, ROLES.keyColumns, COLUMNS, ROLES.sequenceColumns).map((c) => c.sequenceOnly)).toEqual([false, false, true, true]);
    // A site that does not name its sequence columns: every changed cell marked, nothing said to be sequence only.
    expect(changedCells(changes, ROLES.keyColumns, COLUMNS).map((c) => [[...c.cells], c.sequenceOnly])).toEqual([[[3, 4, 5, 7], false], [[3, 4, 5, 7], false], [[3], false], [[3], false]]);
  });

  it('marks a changed cell calmly in the stylesheet: a background and the line-through or bold, no outline boxes that double up', async () => {
    // The renderer's type check knows no node modules; the test runs in node.
    const { readFileSync } = (await import('node:fs' as string)) as { readFileSync(p: URL, e: 'utf8'): string };
    const css = readFileSync(new URL('../styles.css', import.meta.url), 'utf8');
    const rule = (selector: string) => new RegExp(`^${selector.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} \\{([^}]*)\\}`, 'm').exec(css)?.[1];
    expect(rule('tr.change td.changed')).toMatch(/background: var\(--amber-bg\)/);
    expect(rule('tr.change td.changed')).not.toMatch(/outline|border/);
    expect(rule('tr.change-before td.changed')).toMatch(/text-decoration: line-through/);
    expect(rule('tr.change-after td.changed')).toMatch(/font-weight: 700/);
    expect(rule('tr.change-sequence-only')).toMatch(/color: var\(--muted\)/);
  });
});

describe('History: column order', () => {
  const read: HistoryResult = { table: 'stock', snapshotId: 57, snapshotMs: T, more: false, columns: COLUMNS, types: TYPES, rows: [['ITEM-001', 'A-01', 9, 5, 2, 1, 0, 1]], ...ROLES };

  it('shows the key first and the sequence columns last, the cells with their columns', () => {
    expect(stored(render({ history: read }))).toEqual(['item', 'location', 'on_hand', 'reserved', 'inbound', 'inventory_seq', 'commerce_seq', 'procurement_seq']);
    expect(rows(render({ history: read }))[0]!.cells).toEqual(['ITEM-001', 'A-01', '9', '2', '0', '5', '1', '1']);
    expect(stored(render({ diff: diff() }))).toEqual(['Change', 'item', 'location', 'on_hand', 'reserved', 'inbound', 'inventory_seq', 'commerce_seq', 'procurement_seq']);
    // A key column stored after others comes first too (a site's own table).
    expect(columnOrder({ columns: ['state', 'door_id', 'yard_seq', 'note'], keyColumns: ['door_id'], sequenceColumns: ['yard_seq'] })).toEqual([1, 0, 3, 2]);
  });

  it('keeps the stored order from a site that does not name its key and sequence columns', () => {
    const { keyColumns: _k, sequenceColumns: _s, ...older } = read;
    expect(stored(render({ history: older }))).toEqual(COLUMNS);
    expect(rows(render({ history: older }))[0]!.cells).toEqual(['ITEM-001', 'A-01', '9', '5', '2', '1', '0', '1']);
  });
});
