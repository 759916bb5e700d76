// History's "Rows containing" finds a row by a known value as the screen words it: a job "pågår",
// a proposal's risk "hoch", a dead letter "ukjent kontrakt". The site matches the cells as stored
// (in_progress, high, no_contract), so such a search found nothing. The page finds, per column of
// the table it has words for (`VALUE_WORDS`), the stored values whose words hold the search and
// sends them with it (`worded`), which the site matches beside the text, before its cut (core/site
// service.test.ts), in the one request. Over a fake site that filters as core/site service.ts
// `cellFilter` does.
import { describe, expect, it } from 'vitest';
import type { ReadPointRequest, SiteApi, SiteApiMethods, WordedValues } from '../../../core/site/api.ts';
import type { Lang } from '../i18n/messages.ts';
import { createAppStore } from '../store/store.ts';

type Sent = { table: string; contains?: string; worded?: WordedValues[] };

const TABLES: Record<string, { columns: string[]; rows: unknown[][] }> = {
  work_queue: {
    columns: ['job_id', 'status', 'blocked_reason'],
    rows: [['J-1', 'blocked', 'material short: ITEM-003'], ['J-2', 'in_progress', null], ['J-3', 'released', null], ['J-6', 'blocked', 'in Arbeit bei Team B']],
  },
  approval_inbox: { columns: ['id', 'risk', 'agent_status'], rows: [['P-1', 'high', 'open'], ['P-2', 'low', 'withdrawn']] },
  dead_letters: { columns: ['id', 'status', 'reason'], rows: [['1', 'open', 'no_contract'], ['2', 'dismissed', 'bad_json']] },
  stock: { columns: ['item', 'location'], rows: [['ITEM-003', 'L1']] },
};

/** The site's filter: a cell that contains the text as stored, or a `worded` column's cell that is one of its values. */
function keep(columns: string[], contains: string | undefined, worded: WordedValues[] = []) {
  const q = contains?.trim().toLowerCase() ?? '';
  return (row: unknown[]) =>
    !q || row.some((v) => v !== null && String(v).toLowerCase().includes(q)) || worded.some((w) => w.values.includes(row[columns.indexOf(w.column)] as string));
}

function site() {
  const sent: Sent[] = [];
  const record = (req: { table: string; contains?: string; worded?: WordedValues[] }) =>
    sent.push({ table: req.table, ...(req.contains !== undefined ? { contains: req.contains } : {}), ...(req.worded ? { worded: req.worded } : {}) });
  const api = {
    history: async (req: SiteApiMethods['history']['req']) => {
      record(req);
      const { columns, rows } = TABLES[req.table]!;
      const picked = rows.filter(keep(columns, req.contains, req.worded));
      return { table: req.table, snapshotId: 1, snapshotMs: 0, columns, types: columns.map(() => 'STRING'), rows: picked, more: false, keyColumns: [], sequenceColumns: [] };
    },
    diff: async (req: SiteApiMethods['diff']['req']) => {
      record(req);
      const { columns, rows } = TABLES[req.table]!;
      const changes = rows.filter(keep(columns, req.contains, req.worded)).map((row) => ({ kind: '+I', row }));
      return { table: req.table, from: { snapshotId: 0, snapshotMs: null }, to: { snapshotId: 1, snapshotMs: 0 }, columns, types: columns.map(() => 'STRING'), changes, more: false, keyColumns: [], sequenceColumns: [] };
    },
  } as unknown as SiteApi;
  return { api, sent };
}

const LATEST: ReadPointRequest = { latest: true };

async function rowsFound(lang: Lang, table: string, q: string): Promise<{ ids: unknown[]; sent: Sent[] }> {
  const { api, sent } = site();
  const store = createAppStore(api);
  store.setState({ lang });
  await store.getState().loadHistory(table, LATEST, q);
  return { ids: store.getState().history!.rows.map((r) => r[0]), sent };
}

describe('History: "Rows containing" finds a known value as the screen words it', () => {
  it.each([
    ['nb', 'work_queue', 'Pågår', ['J-2']],
    ['de', 'work_queue', 'freigeg', ['J-3']],
    ['en', 'work_queue', 'in progress', ['J-2']],
    ['de', 'approval_inbox', 'hoch', ['P-1']],
    ['nb', 'approval_inbox', 'trukket', ['P-2']],
    ['nb', 'dead_letters', 'ukjent kontrakt', ['1']],
    ['de', 'dead_letters', 'verworfen', ['2']],
  ] as Array<[Lang, string, string, string[]]>)('%s, %s: "%s"', async (lang, table, q, ids) => {
    expect((await rowsFound(lang, table, q)).ids).toEqual(ids);
  });

  it('finds them beside the rows the text is in as stored', async () => {
    // J-6's reason says "in Arbeit"; J-2 is in progress, "in Arbeit" in German.
    expect((await rowsFound('de', 'work_queue', 'in arbeit')).ids).toEqual(['J-2', 'J-6']);
  });

  it('asks the site once, with the stored values its words name, per column, in the language chosen only', async () => {
    expect((await rowsFound('de', 'work_queue', 'in arbeit')).sent).toEqual([{ table: 'work_queue', contains: 'in arbeit', worded: [{ column: 'status', values: ['in_progress'] }] }]);
    // Plain text, a table without words (stock): the search alone.
    expect((await rowsFound('nb', 'work_queue', 'ITEM-003')).sent).toEqual([{ table: 'work_queue', contains: 'ITEM-003' }]);
    expect((await rowsFound('nb', 'stock', 'pågår')).sent).toEqual([{ table: 'stock', contains: 'pågår' }]);
    expect((await rowsFound('en', 'work_queue', 'blokkert')).ids).toEqual([]);
  });

  it('compares with the same words', async () => {
    const { api, sent } = site();
    const store = createAppStore(api);
    store.setState({ lang: 'nb' });
    await store.getState().loadDiff('work_queue', { snapshotId: 1 }, 'pågår');
    expect(store.getState().diff!.changes.map((c) => c.row[0])).toEqual(['J-2']);
    expect(sent).toEqual([{ table: 'work_queue', contains: 'pågår', worded: [{ column: 'status', values: ['in_progress'] }] }]);
  });
});
