// The evidence report tries each later schema when the rows at the tag do not match the record (the
// agent read in the schema current at its run: after two ALTERs neither the snapshot's nor
// today's). A schema the rows cannot be read in (a retyped column whose old values do not cast:
// InvalidArgument) is skipped; a damaged schema file is not — it was skipped too, and the report
// said "ROWS AT THE TAG DIFFER FROM THE RECORD", sending a person after a wrong agent instead of a
// damaged file. Real tables on files.
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { expect, it } from 'vitest';
import { Catalog, isCorruption, LsmError, type Table } from '../lsm/index.ts';
import { evidenceReport, formatEvidence } from './evidence.ts';
import { DB, inboxTest, proposalInput } from './test-support.ts';

const t = inboxTest('tilstand-evidence-damaged-schema-');

/**
 * work_queue at snapshot 1 (schema 0) tagged `agent-r1`; ALTER `note` added (schema 1) and a
 * proposal recording J-1 in schema 1's columns, as the agent reads "now"; then `second` (schema 2).
 */
function twoAlters(second: Parameters<Table['alter']>[0], before?: (table: Table) => void): { table: Table; id: string; recorded: { key: { job_id: string }; values: Record<string, string | null> }[] } {
  const inbox = t.open();
  const table = t.catalog.createTable(
    { database: DB, table: 'work_queue' },
    { fields: [{ name: 'job_id', type: 'STRING NOT NULL' }, { name: 'status', type: 'STRING' }, { name: 'qty', type: 'STRING' }], primaryKeys: ['job_id'], options: { bucket: '1' } },
  );
  const w = table.newWriter();
  w.writeRecord({ job_id: 'J-1', status: 'released', qty: 'a few' });
  w.commit(); // 1
  w.close();
  table.createTag('agent-r1', 1, 3600_000);
  table.alter([{ kind: 'addColumn', name: 'note', type: 'STRING' }]);
  const recorded = [{ key: { job_id: 'J-1' }, values: { job_id: 'J-1', status: 'released', qty: 'a few', note: null } }];
  const [p] = inbox.submit({ runId: 'r1', proposals: [proposalInput('J-1', 'r1', { evidence: [{ table: 'work_queue', snapshotId: 1, tag: 'agent-r1', rows: recorded }] })], withdrawals: [] }).created;
  before?.(table);
  table.alter(second);
  expect(table.schema.id).toBe(2);
  return { table, id: p!.id, recorded };
}

it('a damaged schema between the snapshot\'s and today\'s is reported as corruption, not as rows that differ', () => {
  const { table, id, recorded } = twoAlters([{ kind: 'addColumn', name: 'zone', type: 'STRING' }]);
  // Intact, the rows read as recorded in schema 1 (the test's set-up is the case the loop is for).
  const ok = evidenceReport(new Catalog(t.catalog.warehouse, { clock: () => t.now }), DB, id);
  expect(ok.tables[0]!.atTag).toEqual(recorded);
  expect(ok.tables[0]!.matches).toBe(true);
  writeFileSync(table.paths.schemaFile(1), '{"id": 1, "fields": [');
  // A new catalog, as `tilstand evidence` opens (no schema held in memory).
  let thrown: unknown;
  try {
    const report = evidenceReport(new Catalog(t.catalog.warehouse, { clock: () => t.now }), DB, id);
    thrown = formatEvidence(report).join('\n');
  } catch (e) {
    thrown = e;
  }
  expect(thrown).toBeInstanceOf(LsmError);
  expect(isCorruption(thrown)).toBe(true);
  expect((thrown as LsmError).path).toBe(table.paths.schemaFile(1));
});

it('a schema file that cannot be read (an I/O error) is thrown as such, not skipped', () => {
  const { table, id } = twoAlters([{ kind: 'addColumn', name: 'zone', type: 'STRING' }]);
  // read(2) of a directory fails with EISDIR (a failing disk or a permission would fail the same way; the tests run as root).
  rmSync(table.paths.schemaFile(1));
  mkdirSync(table.paths.schemaFile(1));
  let thrown: unknown;
  try {
    thrown = formatEvidence(evidenceReport(new Catalog(t.catalog.warehouse, { clock: () => t.now }), DB, id)).join('\n');
  } catch (e) {
    thrown = e;
  }
  expect(thrown).toBeInstanceOf(LsmError);
  expect((thrown as LsmError).kind).toBe('IOError');
});

it('a schema the rows cannot be read in (a retyped column whose old value does not cast) is still skipped', () => {
  // Only the tag holds 'a few': an ALTER whose cast fails on a value of the latest snapshot is refused
  // (core/lsm/EVOLUTION-DESIGN.md, "Casts"), so J-1 is rewritten and the table fully compacted first.
  const { table, id, recorded } = twoAlters([{ kind: 'updateColumnType', name: 'qty', type: 'INT' }], (tb) => {
    const w = tb.newWriter();
    w.writeRecord({ job_id: 'J-1', status: 'released', qty: '3', note: null });
    w.commit();
    w.compact(true);
    w.close();
  });
  // Schema 2 cannot read the row: 'a few' is no INT (InvalidArgument, as Paimon's cast throws).
  const r = table.reader({ tag: 'agent-r1', schemaId: 2 });
  try {
    expect(() => r.get({ job_id: 'J-1' })).toThrow(expect.objectContaining({ kind: 'InvalidArgument' }));
  } finally {
    r.close();
  }
  const report = evidenceReport(new Catalog(t.catalog.warehouse, { clock: () => t.now }), DB, id);
  expect(report.tables[0]!.problem).toBeUndefined();
  expect(report.tables[0]!.atTag).toEqual(recorded);
  expect(report.tables[0]!.matches).toBe(true);
});
