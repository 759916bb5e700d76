// `scan.snapshot-id`, `scan.tag-name` and `scan.timestamp-millis` in a table's own options (a Java
// engine's ALTER; this store refuses them at creation and ALTER): Paimon's batch read without a
// time-travel option of its own starts from them (scan.mode default → from-snapshot or
// from-timestamp). `Table.batchReadPoint()` names that point and the CLI's `scan` and `get` read
// there; `reader()` without a point, which the site's own reads and writes use, still reads the
// latest snapshot, and a writer commits after the latest as before.

import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runTableCli } from './cli/table-cli.ts';
import { LsmError } from './errors.ts';
import { TableSchema } from './schema.ts';
import { Table } from './table.ts';
import { runCli } from './testing/cli.ts';
import { thrownLsmError } from './testing/corruption.ts';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/**
 * `<warehouse>/db.db/t` with snapshots 1..3 (one row each, k = id), tag 'two' on snapshot 2, then a
 * `schema-1` with `options` added, as a Java ALTER leaves it. Returns the warehouse.
 */
function javaAltered(options: Record<string, string> | ((committedMs: number[]) => Record<string, string>)): { warehouse: string; dir: string } {
  const warehouse = mkdtempSync(join(tmpdir(), 'lsm-scan-options-'));
  dirs.push(warehouse);
  const dir = join(warehouse, 'db.db', 't');
  // A clock a second on per call: every snapshot has a time of its own.
  let now = Date.now();
  const clock = () => (now += 1000);
  const t = Table.create(dir, TableSchema.fromSpec({ fields: [{ name: 'k', type: 'INT NOT NULL' }], primaryKeys: ['k'], options: { bucket: '1' } }, 0), { clock });
  const w = t.newWriter();
  for (let k = 1; k <= 3; k++) {
    w.writeRecord({ k });
    w.commit();
  }
  w.close();
  t.createTag('two', 2);
  const added = typeof options === 'function' ? options([1, 2, 3].map((id) => t.snapshots.get(id).timeMillis)) : options;
  const json = JSON.parse(readFileSync(join(dir, 'schema', 'schema-0'), 'utf8')) as { id: number; options: Record<string, string> };
  writeFileSync(join(dir, 'schema', 'schema-1'), JSON.stringify({ ...json, id: 1, options: { ...json.options, ...added } }, null, 2));
  return { warehouse, dir };
}

const keys = (rows: unknown[][]) => rows.map((r) => r[0]).sort();

describe("a table's own scan.* time-travel options", () => {
  it('scan.snapshot-id: batch reads start there; reader() and writes keep the latest', () => {
    const { dir } = javaAltered({ 'scan.snapshot-id': '1' });
    const t = Table.open(dir);
    expect(t.batchReadPoint()).toEqual({ snapshotId: 1 });
    expect(keys(t.scanRows(t.batchReadPoint()))).toEqual([1]);
    expect(keys(t.scanRows())).toEqual([1, 2, 3]);
    const w = t.newWriter();
    w.writeRecord({ k: 4 });
    w.commit();
    w.close();
    expect(t.latestSnapshot()!.id).toBe(4);
    expect(keys(t.scanRows())).toEqual([1, 2, 3, 4]);
    expect(keys(t.scanRows(t.batchReadPoint()))).toEqual([1]);
  });

  it('scan.tag-name, scan.timestamp-millis and scan.mode from-snapshot-full name their points', () => {
    expect(Table.open(javaAltered({ 'scan.tag-name': 'two' }).dir).batchReadPoint()).toEqual({ tag: 'two' });
    let ms = 0;
    const t = Table.open(javaAltered((committedMs) => ({ 'scan.timestamp-millis': String((ms = committedMs[1]!)) })).dir);
    expect(t.batchReadPoint()).toEqual({ timestampMs: ms });
    expect(t.snapshots.get(3).timeMillis).toBeGreaterThan(ms);
    expect(keys(t.scanRows(t.batchReadPoint()))).toEqual([1, 2]);
    expect(Table.open(javaAltered({ 'scan.mode': 'from-snapshot-full', 'scan.snapshot-id': '2' }).dir).batchReadPoint()).toEqual({ snapshotId: 2 });
    expect(Table.open(javaAltered({}).dir).batchReadPoint()).toEqual({});
  });

  it('a value that is not one, or an option not read here, is an error naming it', () => {
    const bad = thrownLsmError(() => Table.open(javaAltered({ 'scan.snapshot-id': 'one' }).dir).batchReadPoint());
    expect(bad.kind).toBe('InvalidArgument');
    expect(bad.message).toMatch(/option 'scan.snapshot-id': expected a snapshot id ≥ 1, got 'one'/);
    const watermark = thrownLsmError(() => Table.open(javaAltered({ 'scan.watermark': '5' }).dir).batchReadPoint());
    expect(watermark.kind).toBe('NotSupported');
    expect(watermark.message).toMatch(/'scan.watermark'/);
  });

  it('the CLI’s scan and get read at that point unless given one', async () => {
    const { warehouse } = javaAltered({ 'scan.snapshot-id': '1' });
    const scan = await runCli(runTableCli, ['scan', 'db.t', '--warehouse', warehouse]);
    expect(scan.code).toBe(0);
    expect(scan.out.trim().split('\n')).toEqual(['{"k":1}']);
    const latest = await runCli(runTableCli, ['scan', 'db.t', '--warehouse', warehouse, '--snapshot', '3']);
    expect(latest.out.trim().split('\n')).toHaveLength(3);
    const get = await runCli(runTableCli, ['get', 'db.t', '--warehouse', warehouse, '--key', '{"k":3}']);
    expect(get.code).not.toBe(0);
    expect(get.err).toMatch(/not found: key .* in snapshot 1/);
  });
});
