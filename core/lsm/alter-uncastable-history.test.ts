// ALTER COLUMN TYPE and the values older states hold (EVOLUTION-DESIGN.md "Casts"): the ALTER
// checks the latest snapshot only (time travel reads a snapshot or tag in its own schema); a read
// of an older snapshot or a tag in today's columns (a reader with a later schemaId, `changes`, a
// diff across the ALTER) that meets a value that does not cast fails with an error naming column,
// value, file and snapshot or tag — not a bare cast error.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Catalog } from './catalog.ts';
import { LsmError } from './errors.ts';
import type { SchemaSpec } from './schema.ts';
import type { Table } from './table.ts';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
function newTable(spec: SchemaSpec): Table {
  const d = mkdtempSync(join(tmpdir(), 'lsm-alter-history-'));
  dirs.push(d);
  const c = new Catalog(d);
  c.createDatabase('db');
  return c.createTable({ database: 'db', table: 't' }, spec);
}
const SPEC: SchemaSpec = { fields: [{ name: 'k', type: 'INT' }, { name: 's', type: 'STRING' }], primaryKeys: ['k'], options: { bucket: '1' } };

function write(t: Table, rows: unknown[][], compact = false): void {
  const w = t.newWriter();
  for (const r of rows) w.write(r);
  w.commit();
  if (compact) w.compact(true);
  w.close();
}
function refusal(f: () => unknown): LsmError {
  try {
    f();
  } catch (e) {
    if (e instanceof LsmError) return e;
    throw e;
  }
  throw new Error('expected an error');
}
/** The table at snapshot 1 holds k=1 'not a date' in its only file; the latest snapshot (full compaction) does not. */
function withBadValueInSnapshot1(): { t: Table; file: string } {
  const t = newTable(SPEC);
  write(t, [[1, 'not a date'], [2, '2026-12-01']]);
  const file = t.buckets(t.resolve({ snapshotId: 1 })!)[0]!.files[0]!.fileName;
  write(t, [[1, '2026-12-07']], true);
  const latest = t.buckets(t.latestSnapshot()!).flatMap((b) => b.files.map((f) => f.fileName));
  expect(latest).not.toContain(file);
  return { t, file };
}

describe('ALTER COLUMN TYPE and tags', () => {
  it('is allowed when only a tag holds the value (read in its own schema); a read of the tag in today’s columns names the tag', () => {
    const { t, file } = withBadValueInSnapshot1();
    t.createTag('before', 1);
    t.alter([{ kind: 'updateColumnType', name: 's', type: 'DATE' }]);
    // Time travel, replay and HQ's scan read the tag in its own schema: as it was.
    expect(t.scanRows({ tag: 'before' })).toEqual([[1, 'not a date'], [2, '2026-12-01']]);
    const reads = [
      () => t.scanRows({ tag: 'before', schemaId: 1 }),
      () => [...t.changes({ from: 'before', mode: 'diff' })], // both states in today's columns (`hq diff`)
    ];
    for (const f of reads) {
      const e = refusal(f);
      expect(e.kind).toBe('InvalidArgument');
      expect(e.message).toMatch(/column 's'/);
      expect(e.message).toContain('not a date');
      expect(e.message).toContain(file);
      expect(e.message).toContain("tag 'before'");
    }
  });
});

describe('a read of an older snapshot in today’s columns meets a value that does not cast', () => {
  it('a reader at snapshot 1 in the latest schema fails naming column, value, file and snapshot', () => {
    const { t, file } = withBadValueInSnapshot1();
    t.alter([{ kind: 'updateColumnType', name: 's', type: 'DATE' }]);
    // In its own schema the old snapshot reads as it was.
    expect(t.scanRows({ snapshotId: 1 })).toEqual([[1, 'not a date'], [2, '2026-12-01']]);
    for (const f of [() => t.scanRows({ snapshotId: 1, schemaId: 1 }), () => t.reader({ snapshotId: 1, schemaId: 1 }).get({ k: 1 })]) {
      const e = refusal(f);
      expect(e.kind).toBe('InvalidArgument');
      expect(e.message).toMatch(/column 's'/);
      expect(e.message).toContain('not a date');
      expect(e.message).toContain(file);
      expect(e.message).toContain('snapshot 1');
    }
  });

  it('changes over the older snapshot (delta and diff) fail naming column, value, file and snapshot', () => {
    const { t, file } = withBadValueInSnapshot1();
    t.alter([{ kind: 'updateColumnType', name: 's', type: 'DATE' }]);
    for (const mode of ['delta', 'diff'] as const) {
      // delta: the changes of snapshots 1 and 2; diff: the states at 1 and 2.
      const e = refusal(() => [...t.changes({ from: mode === 'delta' ? 0 : 1, to: 2, mode })]);
      expect(e.kind).toBe('InvalidArgument');
      expect(e.message).toMatch(/column 's'/);
      expect(e.message).toContain('not a date');
      expect(e.message).toContain(file);
      expect(e.message).toMatch(/snapshot 1/);
    }
  });
});
