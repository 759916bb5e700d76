// An approval's checked state compares the cited rows without the table's sequence columns: a
// module's sequence number (`sequence.field`, a partial-update group's sequence field) moves with
// every event it sends, also one that changes nothing the rule read. Real tables on files.
import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Catalog, valueFromJson } from '../lsm/index.ts';
import { compareCited, evidenceReport, formatEvidence, sequenceColumns } from './evidence.ts';
import { Inbox } from './inbox.ts';
import { situationKey, type ProposalInput } from './proposal.ts';
import { UserStore } from './users.ts';

const DB = 'site_s1';
const T0 = Date.UTC(2026, 11, 6, 8, 0, 0);
let dir: string;
let db: Database.Database;
let catalog: Catalog;
let users: UserStore;

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'tilstand-evidence-seq-'));
  catalog = new Catalog(join(dir, 'warehouse'), { clock: () => T0 });
  db = new Database(join(dir, 'site.db'));
  users = new UserStore(db, { scrypt: { N: 1 << 10, r: 8, p: 1 }, nowMs: () => T0, failuresMax: 3, lockoutMs: 60_000 });
  await users.add({ name: 'lena', role: 'shift_lead', pin: '1111' });
});

afterEach(() => {
  db.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('the checked state leaves the sequence columns out', () => {
  it('a moved ops_seq or group sequence alone is "as the agent read them"; a changed business column is named, per row and per table', async () => {
    // The inbox makes the site's database; the tables go in it.
    const i: Inbox = Inbox.open({
      catalog, database: DB, users, clock: () => T0, onWarning: () => undefined,
      recheck: () => ({ holds: true, snapshots: { work_queue: wq.latestSnapshot()!.id, stock: stock.latestSnapshot()!.id } }),
    });
    // As the seed tables: work_queue deduplicates by `sequence.field` ops_seq; stock is partial-update with one sequence field per group.
    const wq = catalog.createTable(
      { database: DB, table: 'work_queue' },
      { fields: [{ name: 'job_id', type: 'STRING NOT NULL' }, { name: 'status', type: 'STRING' }, { name: 'ops_seq', type: 'BIGINT' }], primaryKeys: ['job_id'], options: { bucket: '1', 'merge-engine': 'deduplicate', 'sequence.field': 'ops_seq' } },
    );
    const stock = catalog.createTable(
      { database: DB, table: 'stock' },
      {
        fields: [{ name: 'item', type: 'STRING NOT NULL' }, { name: 'on_hand', type: 'INT' }, { name: 'inventory_seq', type: 'BIGINT' }, { name: 'reserved', type: 'INT' }, { name: 'commerce_seq', type: 'BIGINT' }],
        primaryKeys: ['item'],
        options: { bucket: '1', 'merge-engine': 'partial-update', 'fields.inventory_seq.sequence-group': 'on_hand', 'fields.commerce_seq.sequence-group': 'reserved' },
      },
    );
    expect(sequenceColumns(wq.schema)).toEqual(['ops_seq']);
    expect(sequenceColumns(stock.schema)).toEqual(['inventory_seq', 'commerce_seq']);
    const wqw = wq.newWriter();
    const sw = stock.newWriter();
    try {
      wqw.writeRecord({ job_id: 'J-1', status: 'released', ops_seq: 13n });
      wqw.writeRecord({ job_id: 'J-2', status: 'released', ops_seq: 14n });
      wqw.commit(); // 1
      sw.writeRecord({ item: 'ITEM-017', on_hand: 40, inventory_seq: 5n, reserved: 10, commerce_seq: 7n });
      sw.commit(); // 1
      wq.createTag('agent-r1', 1, 3600_000);
      stock.createTag('agent-r1', 1, 3600_000);
      const proposal = (job: string): ProposalInput => ({
        situationKey: situationKey('assign-job', 'assign_job', { job_id: job }), ruleId: 'assign-job', ruleVersion: '1', action: 'assign_job', module: 'operations',
        params: { job_id: job }, risk: 'low', riskReason: 'reversible', explanation: `start ${job}`, runId: 'r1',
        evidence: [
          { table: 'work_queue', snapshotId: 1, tag: 'agent-r1', rows: [{ key: { job_id: job }, values: { job_id: job, status: 'released', ops_seq: job === 'J-1' ? 13 : 14 } }] },
          { table: 'stock', snapshotId: 1, tag: 'agent-r1', rows: [{ key: { item: 'ITEM-017' }, values: { item: 'ITEM-017', on_hand: 40, inventory_seq: 5, reserved: 10, commerce_seq: 7 } }] },
        ],
      });
      const [a, b] = i.submit({ runId: 'r1', proposals: [proposal('J-1'), proposal('J-2')], withdrawals: [] }).created;
      // The modules sent events that changed no business value: the sequence numbers moved (ops_seq 13 → 87, a group's 5 → 9).
      wqw.writeRecord({ job_id: 'J-1', status: 'released', ops_seq: 87n });
      wqw.commit(); // 2
      sw.writeRecord({ item: 'ITEM-017', on_hand: 40, inventory_seq: 9n });
      sw.commit(); // 2
      expect((await i.decide(a!.id, 'approve', { user: 'lena', pin: '1111' })).outcome).toBe('approved');
      const same = evidenceReport(catalog, DB, a!.id).checked;
      expect(same.map((c) => [c.table, c.matchesEvidence, c.changedColumns, c.sequenceMoved])).toEqual([
        ['work_queue', true, [], true],
        ['stock', true, [], true],
      ]);
      expect(formatEvidence(evidenceReport(catalog, DB, a!.id)).join('\n')).toMatch(/work_queue at snapshot 2 .* — cited rows as the evidence recorded \(only sequence numbers moved\)\n/);

      // Then J-2 started and ITEM-017's reservation grew: those columns are named, the row's cells too.
      wqw.writeRecord({ job_id: 'J-2', status: 'in_progress', ops_seq: 90n });
      wqw.commit(); // 3
      sw.writeRecord({ item: 'ITEM-017', reserved: 25, commerce_seq: 8n });
      sw.commit(); // 3
      expect((await i.decide(b!.id, 'approve', { user: 'lena', pin: '1111' })).outcome).toBe('approved');
      const changed = evidenceReport(catalog, DB, b!.id);
      expect(changed.checked.map((c) => [c.table, c.matchesEvidence, c.changedColumns, c.changedCells])).toEqual([
        ['work_queue', false, ['status'], [['status']]],
        ['stock', false, ['reserved'], [['reserved']]],
      ]);
      expect(formatEvidence(changed).join('\n')).toMatch(/stock at snapshot 3 .* — cited rows changed since the agent read them: reserved\n/);
    } finally {
      i.close();
      wqw.close();
      sw.close();
    }
  });

  it('reads the cited rows of a table keyed by a DATE and a DECIMAL (keys recorded as JSON text; only a BIGINT key was converted, so the report failed)', async () => {
    // The inbox makes the site's database; the table goes in it.
    const i: Inbox = Inbox.open({ catalog, database: DB, users, clock: () => T0, onWarning: () => undefined, recheck: () => ({ holds: true, snapshots: { shifts: 1 } }) });
    const shifts = catalog.createTable(
      { database: DB, table: 'shifts' },
      { fields: [{ name: 'day', type: 'DATE NOT NULL' }, { name: 'lot', type: 'DECIMAL(10, 2) NOT NULL' }, { name: 'crew', type: 'INT' }], primaryKeys: ['day', 'lot'], options: { bucket: '1' } },
    );
    const w = shifts.newWriter();
    try {
      w.writeRecord({ day: valueFromJson(shifts.schema.fields[0]!.type, '2026-12-01'), lot: valueFromJson(shifts.schema.fields[1]!.type, '12.50'), crew: 4 });
      w.commit(); // 1
      shifts.createTag('agent-r1', 1, 3600_000);
      const key = { day: '2026-12-01', lot: '12.50' };
      const [p] = i.submit({
        runId: 'r1',
        withdrawals: [],
        proposals: [{
          situationKey: situationKey('crew', 'notice', key), ruleId: 'crew', ruleVersion: '1', action: 'notice', module: null, params: key, risk: 'low', riskReason: 'a notice', explanation: 'crew', runId: 'r1',
          evidence: [{ table: 'shifts', snapshotId: 1, tag: 'agent-r1', rows: [{ key, values: { ...key, crew: 4 } }] }],
        }],
      }).created;
      expect((await i.decide(p!.id, 'approve', { user: 'lena', pin: '1111' })).outcome).toBe('approved');
      const r = evidenceReport(catalog, DB, p!.id);
      expect(r.checked.map((c) => [c.table, c.matchesEvidence])).toEqual([['shifts', true]]);
    } finally {
      i.close();
      w.close();
    }
  });

  it('compareCited: a row gone at the tag differs in all it had; a column one side lacks counts as null', () => {
    const rec = (values: Record<string, string | number | null>) => ({ key: { id: values.id! }, values });
    expect(compareCited([rec({ id: 'A', state: 'free', seq: 1 })], [{ key: { id: 'A' }, values: {} }], ['seq'])).toEqual({ changedColumns: ['id', 'state'], changedCells: [['id', 'state']], sequenceMoved: true });
    expect(compareCited([rec({ id: 'A', state: 'free' })], [rec({ id: 'A', state: 'free', added: null })], [])).toEqual({ changedColumns: [], changedCells: [[]], sequenceMoved: false });
  });
});
