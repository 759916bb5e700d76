// A commit that fails part-way (a full disk) leaves the writer able to commit again: the writer
// goes on after a failed commit (DESIGN.md, "Write path", "Commit").
//   - A flush whose file write fails keeps its rows. The write buffer was drained before the file
//     was written, so they were lost, and the retried commit succeeded without them (or, with its
//     properties, made a snapshot that recorded progress for rows it lacked). The same for the
//     `input` changelog of those rows, and for an append table's flush cut into several files,
//     whose written files were written again after the failure.
//   - A deletion-vector table's commit whose snapshot cannot be created: its promotion of level 0
//     had already taken the merged files out of the writer's state, so the next commit added the
//     new level-1 file beside them and every key read twice.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { LsmError } from './errors.ts';
import { RowKind } from './key-value.ts';
import { ForwardingFileIO, LocalFileIO } from './file-io.ts';
import { TableSchema, type SchemaSpec } from './schema.ts';
import { Table } from './table.ts';
import { javaRead } from './testing/java-read.ts';
import { mulberry32 } from './testing/prng.ts';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/**
 * Fails `failures` writes of files whose name starts with `prefix`, as a full disk does, after
 * letting `failAfter` such writes through.
 */
class FullDiskIO extends ForwardingFileIO {
  failures = 0;
  failAfter = 0;
  prefix = 'data-';
  override writeNew(path: string, data: Uint8Array): void {
    this.randomFailure(path);
    const name = path.slice(path.lastIndexOf('/') + 1);
    if (this.failures > 0 && name.startsWith(this.prefix) && this.failAfter-- <= 0) {
      this.failures--;
      throw new LsmError('IOError', `write ${path} failed: ENOSPC: no space left on device`, { path });
    }
    super.writeNew(path, data);
  }

  /** While set: every write (new file, atomic create or replace) fails with this chance. */
  chance: { p: number; rnd: () => number } | undefined;
  private randomFailure(path: string): void {
    if (this.chance && this.chance.rnd() < this.chance.p) throw new LsmError('IOError', `write ${path} failed: ENOSPC: no space left on device`, { path });
  }
  override replaceAtomic(path: string, data: Uint8Array): void {
    this.randomFailure(path);
    super.replaceAtomic(path, data);
  }

  /** Fails the atomic create of this snapshot file, once. */
  failSnapshot: string | undefined;
  override createAtomic(path: string, data: Uint8Array): boolean {
    this.randomFailure(path);
    if (path === this.failSnapshot) {
      this.failSnapshot = undefined;
      throw new LsmError('IOError', `create ${path} failed: ENOSPC: no space left on device`, { path });
    }
    return super.createAtomic(path, data);
  }
}

function newTable(spec: SchemaSpec): { table: Table; io: FullDiskIO } {
  const dir = mkdtempSync(join(tmpdir(), 'lsm-flush-failure-'));
  dirs.push(dir);
  const io = new FullDiskIO(new LocalFileIO());
  return { table: Table.create(dir, TableSchema.fromSpec(spec, Date.now()), { fileIO: io }), io };
}

const PK: SchemaSpec = {
  fields: [{ name: 'k', type: 'INT' }, { name: 'v', type: 'STRING' }],
  primaryKeys: ['k'],
  options: { bucket: '1' },
};

describe('a flush whose data file cannot be written', () => {
  it('keeps its rows for the retried commit', () => {
    const { table, io } = newTable(PK);
    const w = table.newWriter();
    w.writeRecord({ k: 1, v: 'a' });
    w.commit();
    w.writeRecord({ k: 2, v: 'b' });
    io.failures = 1;
    expect(() => w.commit({ progress: '2' })).toThrow(/ENOSPC/);
    expect(table.scanRows()).toEqual([[1, 'a']]);
    const again = w.commit({ progress: '2' });
    w.close();
    expect(again.snapshotId).toBeDefined();
    expect(table.scanRows()).toEqual([[1, 'a'], [2, 'b']]);
    expect(table.committedProperties()).toEqual({ progress: '2' });
  });

  it('keeps the rows of a flush the write buffer started, and those written after it', () => {
    const { table, io } = newTable({ ...PK, options: { bucket: '1', 'write-buffer-size': '1 kb' } });
    const w = table.newWriter();
    const want = new Map<number, string>();
    io.failures = 1;
    let failed = false;
    for (let i = 0; i < 1000 && !failed; i++) {
      const row = { k: i % 20, v: `first${i}` };
      // The row that starts the failed flush is buffered: the flush failed, not the row.
      want.set(row.k, row.v);
      try {
        w.writeRecord(row);
      } catch (e) {
        expect((e as Error).message).toMatch(/ENOSPC/);
        failed = true;
      }
    }
    expect(failed).toBe(true);
    for (let k = 0; k < 20; k += 2) {
      w.writeRecord({ k, v: `later${k}` });
      want.set(k, `later${k}`);
    }
    w.commit();
    w.close();
    expect(table.scanRows()).toEqual([...want].sort((a, b) => a[0] - b[0]));
  });

  it('keeps the input changelog of rows whose changelog file cannot be written', () => {
    const { table, io } = newTable({ ...PK, options: { bucket: '1', 'changelog-producer': 'input' } });
    const w = table.newWriter();
    w.writeRecord({ k: 1, v: 'a' });
    w.writeRecord({ k: 1, v: 'b' });
    io.prefix = 'changelog-';
    io.failures = 1;
    expect(() => w.commit()).toThrow(/ENOSPC/);
    w.commit();
    w.close();
    expect(table.scanRows()).toEqual([[1, 'b']]);
    const changes = [...table.changes({ from: 0, mode: 'changelog' })].map((c) => `${c.kind}${c.row.join(',')}`);
    expect(changes).toEqual(['+I1,a', '+I1,b']);
  });

  it('append table: a flush cut into several files writes each row once after a failure', () => {
    const { table, io } = newTable({
      fields: [{ name: 'n', type: 'INT' }, { name: 'pad', type: 'STRING' }],
      options: { bucket: '-1', 'target-file-size': '2 kb', 'write-buffer-size': '1 mb' },
    });
    const w = table.newWriter();
    const pad = 'x'.repeat(100);
    for (let n = 0; n < 100; n++) w.writeRecord({ n, pad });
    io.failures = 1;
    io.failAfter = 2; // the third file of the flush
    expect(() => w.commit()).toThrow(/ENOSPC/);
    w.commit();
    w.close();
    expect(table.scanRows().map((r) => r[0]).sort((a, b) => (a as number) - (b as number))).toEqual(Array.from({ length: 100 }, (_, n) => n));
  });

});

describe('a commit whose snapshot cannot be created', () => {
  it('deletion vectors: the next commit promotes the same level-0 rows again, and each key reads once', () => {
    const { table, io } = newTable({ ...PK, options: { bucket: '1', 'deletion-vectors.enabled': 'true' } });
    const w = table.newWriter();
    for (let k = 0; k < 5; k++) w.writeRecord({ k, v: `a${k}` });
    w.commit();
    w.writeRecord({ k: 1, v: 'b1' });
    w.writeRecord({ k: 7, v: 'b7' });
    io.failSnapshot = table.paths.snapshotFile(table.latestSnapshot()!.id + 1);
    expect(() => w.commit()).toThrow(/ENOSPC/);
    w.writeRecord({ k: 2, v: 'c2' });
    w.commit();
    w.writeRecord({ k: 3, v: 'd3' });
    w.commit();
    w.close();
    const want = [[0, 'a0'], [1, 'b1'], [2, 'c2'], [3, 'd3'], [4, 'a4'], [7, 'b7']];
    expect(table.scanRows()).toEqual(want);
    expect(javaRead(table).rows.sort((a, b) => (a[0] as number) - (b[0] as number))).toEqual(want);
  });

  it('deletion vectors with the lookup changelog: a promotion whose level-1 file cannot be written is made again from the same vectors', () => {
    const { table, io } = newTable({ ...PK, options: { bucket: '1', 'deletion-vectors.enabled': 'true', 'changelog-producer': 'lookup' } });
    const w = table.newWriter();
    for (let k = 0; k < 3; k++) w.writeRecord({ k, v: `a${k}` });
    w.commit();
    w.compact(true); // the rows at the top level: the promotion marks them in a vector
    const first = table.latestSnapshot()!.id;
    w.writeRecord({ k: 1, v: 'b1' });
    io.failures = 1;
    io.failAfter = 1; // the flush's level-0 file is written, the promotion's level-1 file fails
    expect(() => w.commit()).toThrow(/ENOSPC/);
    w.commit();
    w.close();
    expect(table.scanRows().sort((a, b) => (a[0] as number) - (b[0] as number))).toEqual([[0, 'a0'], [1, 'b1'], [2, 'a2']]);
    const changes = [...table.changes({ from: first, mode: 'changelog' })].map((c) => `${c.kind}${c.row.join(',')}`);
    expect(changes).toEqual(['-U1,a1', '+U1,b1']);
  });

  it('deletion vectors: after a failed compaction snapshot the vectors of the files it would have removed still count', () => {
    const { table, io } = newTable({ ...PK, options: { bucket: '1', 'deletion-vectors.enabled': 'true' } });
    const w = table.newWriter();
    for (let k = 0; k < 3; k++) w.writeRecord({ k, v: `a${k}` });
    w.commit();
    w.compact(true);
    w.writeRecord({ k: 1, v: 'b1' }); // marks key 1's row of the top level in a vector
    w.commit();
    io.failSnapshot = table.paths.snapshotFile(table.latestSnapshot()!.id + 1);
    expect(() => w.compact(true)).toThrow(/ENOSPC/);
    w.writeRecord({ k: 2, v: 'c2' });
    w.commit();
    w.close();
    const want = [[0, 'a0'], [1, 'b1'], [2, 'c2']];
    const byKey = (rows: unknown[][]) => rows.sort((a, b) => (a[0] as number) - (b[0] as number));
    expect(byKey(table.scanRows())).toEqual(want);
    expect(byKey(javaRead(table).rows)).toEqual(want);
  });
});

/**
 * Seeds that found a bug, run every time besides two new ones. 860216: a write refused for the
 * rows a failed flush kept ran the stop trigger's merge before taking its row, and that merge
 * failing threw ENOSPC as if the row had been taken (deduplicate).
 */
const FAILED_BEFORE = [860216];

describe('commits and compactions failing at random', () => {
  const VARIANTS: Record<string, Record<string, string>> = {
    deduplicate: {},
    'deletion vectors': { 'deletion-vectors.enabled': 'true' },
    'deletion vectors, lookup changelog': { 'deletion-vectors.enabled': 'true', 'changelog-producer': 'lookup' },
    'lookup changelog': { 'changelog-producer': 'lookup' },
    'input changelog': { 'changelog-producer': 'input' },
    'full-compaction changelog every 2 commits': { 'changelog-producer': 'full-compaction', 'full-compaction.delta-commits': '2' },
    'aggregation sum': { 'merge-engine': 'aggregation', 'fields.v.aggregate-function': 'sum' },
    // A delete then an insert of one key cannot fold in the buffer: the write flushes before it takes its row.
    'partial-update, remove-record-on-delete': { 'merge-engine': 'partial-update', 'partial-update.remove-record-on-delete': 'true' },
  };
  for (const [name, options] of Object.entries(VARIANTS)) {
    it(`${name}: what was written reads as written, and the changelog adds up to it`, () => {
      const base = Number(process.env.COMMIT_FAILURE_SEED ?? Date.now() % 1_000_000);
      for (const seed of [base, base + 1, ...FAILED_BEFORE]) {
        console.log(`commit-failure ${name} seed ${seed}`);
        const rnd = mulberry32(seed);
        const sum = options['merge-engine'] === 'aggregation';
        const small = seed % 2 === 0; // a small write buffer: flushes (and their failures) inside write()
        const { table, io } = newTable({
          fields: [{ name: 'k', type: 'INT' }, { name: 'v', type: 'BIGINT' }],
          primaryKeys: ['k'],
          options: { bucket: '2', 'num-sorted-run.compaction-trigger': '3', ...(small ? { 'write-buffer-size': '300 b' } : {}), ...options },
        });
        const w = table.newWriter();
        const model = new Map<number, bigint>();
        /** Runs `f` with one write in ten failing; a failure is ENOSPC or a bug. */
        const failing = (f: () => unknown) => {
          io.chance = { p: 0.1, rnd };
          try {
            f();
          } catch (e) {
            if (!/ENOSPC/.test((e as Error).message)) throw e;
          } finally {
            io.chance = undefined;
          }
        };
        for (let step = 0; step < 60; step++) {
          const r = rnd();
          if (r < 0.6) {
            const k = Math.floor(rnd() * 8);
            const v = BigInt(Math.floor(rnd() * 100));
            const del = !sum && rnd() < 0.15;
            // A write whose flush fails keeps its row (the flush failed, not the row); one refused
            // because the rows kept before fill the buffer and still cannot be written takes none.
            let refused = false;
            failing(() => {
              try {
                w.write([k, v], del ? RowKind.DELETE : RowKind.INSERT);
              } catch (e) {
                refused = /row not taken/.test((e as Error).message);
                throw e;
              }
            });
            if (refused) continue;
            if (del) model.delete(k);
            else model.set(k, sum ? (model.get(k) ?? 0n) + v : v);
          } else if (r < 0.9) failing(() => w.commit());
          else failing(() => w.compact(true));
        }
        w.commit();
        w.compact(true);
        w.close();
        const want = [...model].map(([k, v]) => `${k}=${v}`).sort();
        const show = (rows: unknown[][]) => rows.map((row) => `${row[0]}=${row[1]}`).sort();
        expect(show(table.scanRows()), `seed ${seed}`).toEqual(want);
        expect(show(javaRead(table).rows), `seed ${seed}: Java's read`).toEqual(want);
        if (options['changelog-producer'] !== undefined) {
          const state = new Map<unknown, unknown>();
          for (const c of table.changes({ from: 0, mode: 'changelog' })) {
            if (c.kind === '+I' || c.kind === '+U') state.set(c.row[0], c.row[1]);
            else if (c.kind === '-D') state.delete(c.row[0]);
          }
          expect(show([...state]), `seed ${seed}: the changelog`).toEqual(want);
        }
      }
    });
  }
});
