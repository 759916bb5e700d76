// Unit tests of the table store, one concept per block: schema and options, the writer lock,
// commits and snapshots, time travel, filters, compaction, tags, expiration, corruption, and
// what an independent reader (Apache's Avro via paimon-check, hyparquet) makes of our files.

import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, truncateSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parquetReadObjects } from 'hyparquet';
import { compressors } from 'hyparquet-compressors';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { Catalog } from './catalog.ts';
import { isCorruption, LsmError } from './errors.ts';
import { localFileIO } from './file-io.ts';
import { RowKind } from './key-value.ts';
import { TableSchema, type SchemaSpec } from './schema.ts';
import type { Table } from './table.ts';
import { paimonCheck, paimonCheckAvailable } from './testing/shared.ts';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'lsm-'));
  dirs.push(d);
  return d;
}

const STOCK: SchemaSpec = {
  fields: [
    { name: 'item', type: 'STRING' },
    { name: 'location', type: 'STRING' },
    { name: 'qty', type: 'INT' },
    { name: 'price', type: 'DECIMAL(10, 2)' },
    { name: 'updated', type: 'TIMESTAMP(3)' },
  ],
  primaryKeys: ['item', 'location'],
  options: { bucket: '2' },
};

function setup(spec: SchemaSpec = STOCK, clock?: () => number): { catalog: Catalog; table: Table; dir: string } {
  const dir = tempDir();
  const catalog = new Catalog(dir, clock ? { clock } : {});
  catalog.createDatabase('db');
  return { catalog, table: catalog.createTable({ database: 'db', table: 't' }, spec), dir };
}

const row = (item: string, location: string, qty: number | null): Record<string, unknown> => ({ item, location, qty, price: 1999n, updated: 1_700_000_000_000_000 });

/** Items i00000…i01999 at location x with qty i + add, committed (the many-file runs' tests). */
function writeNumbered(w: ReturnType<Table['newWriter']>, add: number): void {
  for (let i = 0; i < 2000; i++) w.writeRecord(row(`i${String(i).padStart(5, '0')}`, 'x', i + add));
  w.commit();
}

describe('schema and options', () => {
  it('writes schema-0 as Paimon JSON with field ids and forced NOT NULL keys', () => {
    const { table } = setup();
    const json = JSON.parse(readFileSync(table.paths.schemaFile(0), 'utf8'));
    expect(json.version).toBe(3);
    expect(json.fields.map((f: { id: number; name: string; type: string }) => `${f.id}:${f.name}:${f.type}`)).toEqual([
      '0:item:STRING NOT NULL',
      '1:location:STRING NOT NULL',
      '2:qty:INT',
      '3:price:DECIMAL(10, 2)',
      '4:updated:TIMESTAMP(3)',
    ]);
    expect(json.highestFieldId).toBe(4);
    expect(json.options.bucket).toBe('2');
    expect(json.options['file.format']).toBe('parquet');
  });

  it.each([
    [{ 'no.such.option': 'x' }, /unknown option 'no.such.option'/],
    [{ bucket: 'two' }, /option 'bucket': expected an integer/],
    [{ bucket: '-1' }, /option 'bucket'.*dynamic.*not supported/],
    [{ 'merge-engine': 'latest' }, /option 'merge-engine': expected one of/],
    [{ 'write-buffer-size': 'lots' }, /option 'write-buffer-size': expected a memory size/],
    [{ 'snapshot.time-retained': 'forever' }, /option 'snapshot.time-retained': expected a duration/],
    [{ 'bucket-key': 'qty' }, /option 'bucket-key': column 'qty' is not in the primary key/],
    [{ 'sequence.field': 'nope' }, /option 'sequence.field' names unknown column 'nope'/],
    [{ 'fields.qty.sequence-group': 'price' }, /needs merge-engine 'partial-update'/],
    // Paimon's SchemaValidation refuses both; accepted, the max was silently ignored.
    [{ 'snapshot.num-retained.min': '20', 'snapshot.num-retained.max': '5' }, /option 'snapshot.num-retained.min' \(20\) must not be larger than 'snapshot.num-retained.max' \(5\)/],
    [{ 'snapshot.num-retained.max': '5' }, /'snapshot.num-retained.min' \(10\) must not be larger/],
    // Paimon's partial-update factory refuses these pairs; a table Java engines cannot write was made.
    [{ 'merge-engine': 'partial-update', 'partial-update.remove-record-on-delete': 'true', 'ignore-delete': 'true' }, /option 'partial-update.remove-record-on-delete' conflicts with 'ignore-delete'/],
    [
      { 'merge-engine': 'partial-update', 'fields.updated.sequence-group': 'price', 'partial-update.remove-record-on-sequence-group': 'updated', 'partial-update.ignore-delete': 'true' },
      /option 'partial-update.remove-record-on-sequence-group' conflicts with 'ignore-delete'/,
    ],
    [{ 'merge-engine': 'partial-update', 'fields.updated.sequence-group': 'price', 'partial-update.remove-record-on-delete': 'true' }, /option 'partial-update.remove-record-on-delete' conflicts with sequence groups/],
  ])('refuses options %j naming the option', (options, message) => {
    expect(() => TableSchema.fromSpec({ ...STOCK, options: { ...STOCK.options, ...options } as Record<string, string> }, 0)).toThrow(message);
  });

  it('refuses bad schemas clearly', () => {
    expect(() => TableSchema.fromSpec({ fields: [] }, 0)).toThrow(/non-empty/);
    expect(() => TableSchema.fromSpec({ ...STOCK, primaryKeys: ['nope'] }, 0)).toThrow(/unknown column 'nope'/);
    expect(() => TableSchema.fromSpec({ ...STOCK, fields: [...STOCK.fields, { name: 'qty', type: 'INT' }] }, 0)).toThrow(/duplicate column 'qty'/);
    expect(() => TableSchema.fromSpec({ ...STOCK, fields: [{ name: '../x', type: 'INT' }] }, 0)).toThrow(/column/);
    // Without a primary key it is an append table (append-table.ts): bucketed ones need a bucket key.
    expect(() => TableSchema.fromSpec({ ...STOCK, primaryKeys: [] }, 0)).toThrow(/needs option 'bucket-key'/);
    expect(TableSchema.fromSpec({ ...STOCK, primaryKeys: [], options: {} }, 0).options.bucket).toBe(-1);
    // A partition key outside the primary key: Paimon wants dynamic buckets (cross-partition update).
    expect(() => TableSchema.fromSpec({ ...STOCK, partitionKeys: ['qty'] }, 0)).toThrow(/the primary key \(item, location\) does not include the partition key 'qty'.*bucket = -1/);
  });
});

describe('partitions', () => {
  const rows = (t: Table) => t.scanRows().map((r) => JSON.stringify(r)).sort();
  it('keeps partitions apart whose values read alike (a null and "null"; values holding the separator)', () => {
    const { table: pk } = setup({ fields: [{ name: 'p1', type: 'STRING' }, { name: 'p2', type: 'STRING' }, { name: 'k', type: 'STRING' }, { name: 'v', type: 'INT' }], primaryKeys: ['p1', 'p2', 'k'], partitionKeys: ['p1', 'p2'], options: { bucket: '1' } });
    const w = pk.newWriter();
    w.writeRecord({ p1: 'a\u0000b', p2: 'c', k: 'k', v: 1 });
    w.writeRecord({ p1: 'a', p2: 'b\u0000c', k: 'k', v: 2 }); // was written into the partition above and merged with its row
    w.commit();
    w.close();
    expect(rows(pk)).toEqual([JSON.stringify(['a', 'b\u0000c', 'k', 2]), JSON.stringify(['a\u0000b', 'c', 'k', 1])].sort());

    const { table: app } = setup({ fields: [{ name: 'p', type: 'STRING' }, { name: 'v', type: 'INT' }], partitionKeys: ['p'], options: { bucket: '-1' } });
    const a = app.newWriter();
    a.writeRecord({ p: null, v: 1 });
    a.writeRecord({ p: 'null', v: 2 });
    a.writeRecord({ p: 'x\u0000y', v: 3 });
    a.commit();
    a.close();
    expect(rows(app)).toEqual([JSON.stringify([null, 1]), JSON.stringify(['null', 2]), JSON.stringify(['x\u0000y', 3])].sort());
    expect(app.buckets(app.latestSnapshot()!).length).toBe(3);
  });
});

describe('writer lock', () => {
  it('refuses a second writer in the same process and after close lets one in', () => {
    const { table } = setup();
    const w = table.newWriter();
    expect(() => table.newWriter()).toThrow(/already has a writer/);
    w.close();
    table.newWriter().close();
  });

  it('refuses a writer in another process with a clear Conflict, and takes over a stale lock', () => {
    const { table, dir } = setup();
    const w = table.newWriter();
    const script = `
      import { Catalog } from ${JSON.stringify(resolve(__dirname, 'index.ts'))};
      const t = new Catalog(${JSON.stringify(dir)}).getTable({ database: 'db', table: 't' });
      try { t.newWriter(); console.log('acquired'); } catch (e) { console.log(e.kind + ': ' + e.message); }
    `;
    const run = () => spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { encoding: 'utf8' });
    const r = run();
    expect(r.stdout).toMatch(/^Conflict: table db\.t is being written by process \d+/);
    w.close();
    // A lock left by a process that died (pid that cannot exist) is stale.
    writeFileSync(table.paths.lockFile, JSON.stringify({ pid: 2 ** 22 + 12345, host: require('node:os').hostname(), token: 'x', sinceMs: 0 }));
    expect(run().stdout.trim()).toBe('acquired');
  }, 30_000);
});

describe('writer lock, two processes at once', () => {
  it('a process opening while another is between creating the lock and writing its owner neither steals it nor is let in twice', async () => {
    const { table, dir } = setup();
    const go = join(dir, 'go');
    // The child stops inside its lock acquisition, at its first write of the owner record, until
    // the parent has tried; what the parent can see of the lock then is what a concurrent opener sees.
    const script = `
      import fs from 'node:fs';
      import { syncBuiltinESMExports } from 'node:module';
      const write = fs.writeSync;
      let paused = false;
      fs.writeSync = (fd, data, ...rest) => {
        if (!paused && typeof data === 'string' && data.includes('"token"')) {
          paused = true;
          process.stdout.write('paused\\n');
          const cell = new Int32Array(new SharedArrayBuffer(4));
          for (let i = 0; i < 1000 && !fs.existsSync(${JSON.stringify(go)}); i++) Atomics.wait(cell, 0, 0, 10);
        }
        return write(fd, data, ...rest);
      };
      syncBuiltinESMExports();
      const { Catalog } = await import(${JSON.stringify(resolve(__dirname, 'index.ts'))});
      const t = new Catalog(${JSON.stringify(dir)}).getTable({ database: 'db', table: 't' });
      try { const w = t.newWriter(); console.log('acquired'); w.close(); } catch (e) { console.log(e.kind + ': ' + e.message); }
    `;
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    const exited = new Promise<void>((done) => child.on('exit', () => done()));
    await new Promise<void>((ready, fail) => {
      child.stdout.on('data', (d: Buffer) => {
        out += d.toString();
        if (out.includes('paused')) ready();
      });
      child.on('exit', () => fail(new Error(`child exited early: ${out}`)));
    });
    let parent: ReturnType<Table['newWriter']> | string;
    try {
      parent = table.newWriter();
    } catch (e) {
      parent = (e as LsmError).kind;
    }
    writeFileSync(go, '');
    await exited;
    const childGot = out.replace('paused', '').trim();
    if (typeof parent !== 'string') parent.close();
    // Exactly one of the two holds the lock; the other is refused with a Conflict.
    expect([typeof parent === 'string' ? parent : 'acquired', childGot.startsWith('Conflict') ? 'Conflict' : childGot].sort()).toEqual(['Conflict', 'acquired']);
  }, 30_000);
});

describe('commits and snapshots', () => {
  it('creates contiguous snapshots with hints, and a commit with nothing new makes none', () => {
    const { table } = setup();
    const w = table.newWriter();
    w.writeRecord(row('a', 'x', 1));
    expect(w.commit().snapshotId).toBe(1);
    w.writeRecord(row('b', 'x', 2));
    expect(w.commit().snapshotId).toBe(2);
    expect(w.commit().snapshotId).toBeUndefined();
    w.close();
    expect(readFileSync(table.paths.latestHint, 'utf8')).toBe('2');
    expect(table.snapshots.listIds()).toEqual([1, 2]);
    const s = table.latestSnapshot()!;
    expect(s.totalRecordCount).toBe(2);
    expect(s.commitKind).toBe('APPEND');
  });

  it('a writer that takes the table repairs a LATEST hint left behind by a killed commit', () => {
    const { table } = setup();
    const w = table.newWriter();
    w.writeRecord(row('a', 'x', 1));
    w.commit();
    w.writeRecord(row('b', 'x', 2));
    w.commit();
    w.close();
    // Killed between creating snapshot-2 and rewriting the hint (what paimon-check reports).
    writeFileSync(table.paths.latestHint, '1');
    expect(table.latestSnapshot()!.id).toBe(2); // readers look past a lagging hint
    table.newWriter().close();
    expect(readFileSync(table.paths.latestHint, 'utf8')).toBe('2');
  });

  it('never overwrites an existing snapshot file', () => {
    const dir = tempDir();
    const p = join(dir, 'snapshot-1');
    expect(localFileIO.createAtomic(p, Buffer.from('first'))).toBe(true);
    expect(localFileIO.createAtomic(p, Buffer.from('second'))).toBe(false);
    expect(readFileSync(p, 'utf8')).toBe('first');
    expect(readdirSync(dir)).toEqual(['snapshot-1']);
  });

  it('drops uncommitted rows when the writer closes, and resumes sequence numbers after reopen', () => {
    const { catalog, table } = setup({ ...STOCK, options: { bucket: '1' } });
    const w = table.newWriter();
    w.writeRecord(row('a', 'x', 1));
    w.commit();
    w.writeRecord(row('a', 'x', 99)); // never committed
    w.close();
    const t2 = catalog.getTable({ database: 'db', table: 't' });
    expect(t2.scanRows().map((r) => r[2])).toEqual([1]);
    const w2 = t2.newWriter();
    w2.writeRecord(row('a', 'x', 2));
    w2.commit();
    w2.close();
    expect(t2.scanRows().map((r) => r[2])).toEqual([2]);
    const seqs = t2.buckets(t2.latestSnapshot()!).flatMap((b) => b.files.map((f) => [f.minSequenceNumber, f.maxSequenceNumber]));
    expect(Math.max(...seqs.flat())).toBe(1);
  });

  it('validates every value at the boundary, naming the column', () => {
    const { table } = setup();
    const w = table.newWriter();
    expect(() => w.writeRecord({ ...row('a', 'x', 1), qty: 'many' })).toThrow(/column 'qty' \(INT\): expected an integer/);
    expect(() => w.writeRecord({ ...row('a', 'x', 1), item: null })).toThrow(/column 'item'.*must not be null/);
    w.close();
  });
});

describe('records', () => {
  // A record's value of a column is its own property: a column named like one of Object's
  // (constructor, toString, valueOf) that a record leaves out read the inherited function, and
  // every such record was refused as not fitting the column.
  it('reads a column named like an Object property from the record itself, null when it is left out', () => {
    const { table } = setup({
      fields: [
        { name: 'id', type: 'STRING' },
        { name: 'constructor', type: 'STRING' },
        { name: 'toString', type: 'INT' },
        { name: '__proto__', type: 'STRING' },
      ],
      primaryKeys: ['id'],
      options: { bucket: '1' },
    });
    const w = table.newWriter();
    w.writeRecord({ id: 'a' });
    // A computed key makes an own property named __proto__ (as JSON.parse does), not a prototype.
    const b = { id: 'b', constructor: 'made', toString: 7, ['__proto__']: 'p' };
    w.writeRecord(b);
    w.commit();
    w.close();
    expect(table.scanRows()).toEqual([
      ['a', null, null, null],
      ['b', 'made', 7, 'p'],
    ]);
  });
});

describe('reads', () => {
  it('time-travels by snapshot id, tag and timestamp, and explains a time before the first snapshot', () => {
    let now = 1_800_000_000_000;
    const { table } = setup(STOCK, () => now);
    const w = table.newWriter();
    w.writeRecord(row('a', 'x', 1));
    w.commit();
    table.createTag('first');
    now += 60_000;
    w.writeRecord(row('a', 'x', 2));
    w.commit();
    w.close();
    const qty = (at: Parameters<Table['scanRows']>[0]) => table.scanRows(at).map((r) => r[2]);
    expect(qty({})).toEqual([2]);
    expect(qty({ snapshotId: 1 })).toEqual([1]);
    expect(qty({ tag: 'first' })).toEqual([1]);
    expect(qty({ timestampMs: now - 1 })).toEqual([1]);
    expect(qty({ timestampMs: now })).toEqual([2]);
    expect(() => table.scanRows({ timestampMs: 1_000 })).toThrow(/no snapshot of .* at or before 1970.*earliest retained is 1/);
    expect(() => table.scanRows({ snapshotId: 9 })).toThrow(/snapshot 9 .* does not exist/);
    expect(() => table.scanRows({ tag: 'nope' })).toThrow(/tag 'nope' does not exist/);
  });

  it('keeps snapshot times from going back when the clock steps back, so a read by time stays right', () => {
    let now = 1_800_000_000_000;
    const { table } = setup(STOCK, () => now);
    const w = table.newWriter();
    w.writeRecord(row('a', 'x', 1));
    w.commit();
    now += 60_000;
    w.writeRecord(row('a', 'x', 2));
    w.commit();
    const before = now;
    now -= 3_600_000; // an NTP step back by an hour
    w.writeRecord(row('a', 'x', 3));
    w.commit();
    now += 10_000;
    w.writeRecord(row('a', 'x', 4));
    w.commit();
    w.close();
    const times = table.snapshots.listIds().map((id) => table.snapshots.get(id).timeMillis);
    expect(times).toEqual([before - 60_000, before, before, before]);
    const qty = (at: Parameters<Table['scanRows']>[0]) => table.scanRows(at).map((r) => r[2]);
    // Without the clamp snapshots 3 and 4 would sit an hour before 2 and this would read 1.
    expect(qty({ timestampMs: before - 1 })).toEqual([1]);
    expect(qty({ timestampMs: before })).toEqual([4]);
  });

  it('skips files whose key statistics rule out the filter', () => {
    const { table } = setup({ ...STOCK, options: { bucket: '1', 'num-sorted-run.compaction-trigger': '50' } });
    const w = table.newWriter();
    for (const letter of 'abcdefgh') {
      for (let i = 0; i < 20; i++) w.writeRecord(row(`${letter}${i}`, 'x', i));
      w.commit(); // one level-0 file per letter
    }
    w.close();
    const fresh = new Catalog(join(table.paths.root, '..', '..')).getTable({ database: 'db', table: 't' });
    const r = fresh.reader();
    const rows = [...r.scan({ where: [{ column: 'item', op: 'prefix', value: 'c' }] })];
    expect(rows).toHaveLength(20);
    expect(fresh.cache.misses).toBe(1);
    expect([...r.scan({ where: [{ column: 'item', op: '>=', value: 'g' }], projection: ['qty', 'item'] })][0]).toEqual([0, 'g0']);
    expect(fresh.cache.misses).toBe(3);
    r.close();
  });

  it("decodes a run's files as the scan reaches them, not the whole bucket up front", () => {
    // One sorted run of many files (a full compaction rolled at 1 kb): a scan holds the file its
    // cursor is in, so a cold scan that has handed out its first rows has read only the first files.
    const { table } = setup({ ...STOCK, options: { bucket: '1', 'target-file-size': '1 kb' } });
    const w = table.newWriter();
    // Two overlapping runs: the full compaction merges them, rolling its output.
    for (const add of [1, 0]) writeNumbered(w, add);
    w.compact(true);
    w.close();
    const cold = () => new Catalog(join(table.paths.root, '..', '..')).getTable({ database: 'db', table: 't' });
    const [bucket] = [...table.buckets(table.latestSnapshot()!)];
    const runs = table.runsOf(bucket!.files);
    expect(runs).toHaveLength(1);
    expect(runs[0]!.files.length).toBeGreaterThan(4);
    for (const projection of [undefined, ['qty']]) {
      const fresh = cold();
      const r = fresh.reader();
      const before = fresh.cache.misses;
      const rows = r.scan(projection ? { projection } : {});
      const first = rows.next().value as unknown[];
      expect(projection ? first : first.slice(0, 3)).toEqual(projection ? [0] : ['i00000', 'x', 0]);
      const read = fresh.cache.misses - before;
      // The first batch of rows (256) spans the first few files of the run, never all of them.
      expect(read).toBeGreaterThan(0);
      expect(read).toBeLessThan(runs[0]!.files.length);
      expect([...rows]).toHaveLength(1999);
      expect(fresh.cache.misses - before).toBe(runs[0]!.files.length);
      r.close();
    }
  });

  it("diffs two states decoding each file when the merge reaches it, not one whole state before the other", () => {
    const { table } = setup({ ...STOCK, options: { bucket: '1', 'target-file-size': '1 kb' } });
    const w = table.newWriter();
    for (const add of [1, 0]) writeNumbered(w, add);
    w.compact(true); // one run of many files
    const before = table.snapshots.latestId()!;
    w.writeRecord(row('i00000', 'x', -1));
    w.writeRecord(row('i01999', 'x', -1));
    w.commit();
    w.compact(true); // the whole state rewritten: every file of the later state is new
    w.close();
    const fresh = new Catalog(join(table.paths.root, '..', '..')).getTable({ database: 'db', table: 't' });
    const names = (id: number) => new Set([...fresh.buckets(fresh.snapshots.get(id))][0]!.files.map((f) => f.fileName));
    const [older, later] = [names(before), names(fresh.snapshots.latestId()!)];
    expect(older.size).toBeGreaterThan(4);
    const loads = vi.spyOn(fresh, 'loadRun');
    const changes = [...fresh.changes({ from: before, mode: 'diff' })];
    expect(changes.map((c) => [c.kind, c.row[0], c.row[2]])).toEqual([['-U', 'i00000', 0], ['+U', 'i00000', -1], ['-U', 'i01999', 1999], ['+U', 'i01999', -1]]);
    // The two states advance together: the older state's first file, then the later state's
    // (its first file was rewritten: key i00000 changed) — not every file of the older state first.
    const loaded = loads.mock.calls.map((c) => c[2].fileName);
    expect(older.has(loaded[0]!) && !later.has(loaded[0]!)).toBe(true);
    expect(later.has(loaded[1]!) && !older.has(loaded[1]!)).toBe(true);
    expect(new Set(loaded)).toEqual(new Set([...older, ...later]));
  });

  it('keeps the files a writer writes out of the run cache when asked (cacheWrites: false)', () => {
    for (const cacheWrites of [true, false]) {
      const { table, catalog } = setup({ ...STOCK, options: { bucket: '1', 'num-sorted-run.compaction-trigger': '2' } });
      const w = table.newWriter(cacheWrites ? {} : { cacheWrites });
      for (const add of [1, 0]) {
        for (let i = 0; i < 100; i++) w.writeRecord(row(`i${i}`, 'x', i + add));
        w.commit(); // the second commit compacts too
      }
      w.close();
      const b = [...table.buckets(table.latestSnapshot()!)][0]!;
      const files = b.files;
      expect(files.length).toBeGreaterThan(0);
      const cached = files.filter((f) => catalog.cacheBudget.entries.has(table.dataFilePath(b.partition, b.bucket, f.fileName)));
      expect(cached.length, `cacheWrites ${cacheWrites}`).toBe(cacheWrites ? files.length : 0);
      const rows = table.scanRows();
      expect(rows).toHaveLength(100);
      for (const r of rows) expect(r[2]).toBe(Number(String(r[0]).slice(1)));
    }
    // An append table's writer the same.
    for (const cacheWrites of [true, false]) {
      const { table, catalog } = setup({ fields: STOCK.fields });
      const w = table.newWriter(cacheWrites ? {} : { cacheWrites });
      for (let i = 0; i < 100; i++) w.writeRecord(row(`i${i}`, 'x', i));
      w.commit();
      w.close();
      const paths = [...table.buckets(table.latestSnapshot()!)].flatMap((b) => b.files.map((f) => table.dataFilePath(b.partition, b.bucket, f.fileName)));
      expect(paths.length).toBeGreaterThan(0);
      expect(paths.filter((p) => catalog.cacheBudget.entries.has(p)).length, `append, cacheWrites ${cacheWrites}`).toBe(cacheWrites ? paths.length : 0);
      expect(table.scanRows()).toHaveLength(100);
    }
  });

  it('scans without filling the run cache when asked (fillCache: false), using what it holds', () => {
    const { table } = setup({ ...STOCK, options: { bucket: '1' } });
    const w = table.newWriter();
    for (const add of [1, 0]) {
      for (let i = 0; i < 500; i++) w.writeRecord(row(`i${String(i).padStart(4, '0')}`, 'x', i + add));
      w.commit(); // two runs
    }
    w.close();
    const cold = new Catalog(join(table.paths.root, '..', '..'));
    const fresh = cold.getTable({ database: 'db', table: 't' });
    const qty = (rows: unknown[][]) => rows.map((r) => r[r.length === 1 ? 0 : 2]);
    const want = Array.from({ length: 500 }, (_, i) => i);
    for (const projection of [['qty'], undefined]) {
      const misses = fresh.cache.misses;
      expect(qty(fresh.scanRows({}, { fillCache: false, ...(projection ? { projection } : {}) }))).toEqual(want);
      expect(fresh.cache.misses - misses).toBe(2);
      expect(cold.cacheBudget.entries.size).toBe(0);
      expect(cold.cacheBudget.usedBytes).toBe(0);
    }
    // A scan that fills; then one that does not still reads from the cache.
    expect(qty(fresh.scanRows())).toEqual(want);
    expect(cold.cacheBudget.entries.size).toBe(2);
    const misses = fresh.cache.misses;
    expect(qty(fresh.scanRows({}, { fillCache: false, projection: ['qty'] }))).toEqual(want);
    expect(fresh.cache.misses).toBe(misses);
  });

  it("compacts decoding each input file when the merge reaches it: output is written before the last input is read", () => {
    const { table } = setup({ ...STOCK, options: { bucket: '1', 'target-file-size': '1 kb' } });
    const w = table.newWriter();
    writeNumbered(w, 2);
    writeNumbered(w, 1);
    w.compact(true); // one run of many files at the top level
    writeNumbered(w, 0); // and one level-0 file over it
    w.close();
    const fresh = new Catalog(join(table.paths.root, '..', '..')).getTable({ database: 'db', table: 't' });
    const [bucket] = [...fresh.buckets(fresh.latestSnapshot()!)];
    const inputs = bucket!.files.length;
    expect(inputs).toBeGreaterThan(4);
    const loads = vi.spyOn(fresh, 'loadRun');
    const w2 = fresh.newWriter();
    const writes: number[] = [];
    const writeRun = (w2 as unknown as { writeRun: (...a: unknown[]) => unknown }).writeRun.bind(w2);
    vi.spyOn(w2 as unknown as { writeRun: (...a: unknown[]) => unknown }, 'writeRun').mockImplementation((...a) => (writes.push(loads.mock.calls.length), writeRun(...a)));
    w2.compact(true);
    w2.close();
    expect(loads).toHaveBeenCalledTimes(inputs);
    expect(writes.length).toBeGreaterThan(2);
    // When the first output file was written, only the first few inputs had been decoded.
    expect(writes[0]).toBeLessThan(inputs / 2);
    expect(fresh.scanRows().map((r) => r[2])).toEqual(Array.from({ length: 2000 }, (_, i) => i));
  });

  it('looks keys up at any snapshot and sees deletes', () => {
    const { table } = setup();
    const w = table.newWriter();
    w.writeRecord(row('a', 'x', 1));
    w.writeRecord(row('b', 'x', 1));
    w.commit();
    w.writeRecord(row('a', 'x', 0), RowKind.DELETE);
    w.commit();
    w.close();
    expect(table.reader().get({ item: 'a', location: 'x' })).toBeUndefined();
    expect(table.reader({ snapshotId: 1 }).get({ item: 'a', location: 'x' })?.[2]).toBe(1);
    expect(() => table.reader().get({ item: 'a' })).toThrow(/primary-key column 'location'/);
  });
});

describe('merge engines beyond the model tests', () => {
  it('orders by several sequence fields lexicographically', () => {
    const { table } = setup({
      fields: [
        { name: 'k', type: 'INT' },
        { name: 'major', type: 'INT' },
        { name: 'minor', type: 'INT' },
        { name: 'v', type: 'STRING' },
      ],
      primaryKeys: ['k'],
      options: { bucket: '1', 'sequence.field': 'major,minor' },
    });
    const w = table.newWriter();
    w.writeRecord({ k: 1, major: 2, minor: 1, v: 'newest' });
    w.writeRecord({ k: 1, major: 1, minor: 9, v: 'older major' });
    w.commit();
    w.writeRecord({ k: 1, major: 2, minor: 0, v: 'older minor' });
    w.writeRecord({ k: 1, major: null, minor: 99, v: 'null sorts first' });
    w.commit();
    w.close();
    expect(table.scanRows().map((r) => r[3])).toEqual(['newest']);
  });

  it('refuses a retraction on partial-update without a way to apply it, listing the options', () => {
    const { table } = setup({ ...STOCK, options: { bucket: '1', 'merge-engine': 'partial-update' } });
    const w = table.newWriter();
    w.writeRecord(row('a', 'x', 1));
    expect(() => w.writeRecord(row('b', 'x', 1), RowKind.DELETE)).toThrow(/ignore-delete.*remove-record-on-delete.*sequence-group/);
    w.commit();
    w.close();
    expect(table.scanRows()).toHaveLength(1);
  });

  it('partial-update: null means no change; ignore-delete drops deletes', () => {
    const { table } = setup({ ...STOCK, options: { bucket: '1', 'merge-engine': 'partial-update', 'ignore-delete': 'true' } });
    const w = table.newWriter();
    w.writeRecord({ item: 'a', location: 'x', qty: 5, price: 100n });
    w.commit();
    w.writeRecord({ item: 'a', location: 'x', qty: null, price: 200n });
    w.writeRecord({ item: 'a', location: 'x' }, RowKind.DELETE);
    w.commit();
    w.close();
    expect(table.scanRows().map((r) => [r[2], r[3]])).toEqual([[5, 200n]]);
  });

  // Paimon (UserDefinedSeqComparator: a generated row compare with nullIsLast=false) applies the
  // '-' of a descending order only to two non-null values: a NULL sequence value is the oldest in
  // either order (paimon-features.md §1).
  it('a NULL sequence value never beats a value, also with a descending sequence.field', () => {
    const { table } = setup({
      fields: [
        { name: 'k', type: 'INT' },
        { name: 'ts', type: 'BIGINT' },
        { name: 'v', type: 'STRING' },
      ],
      primaryKeys: ['k'],
      options: { bucket: '1', 'sequence.field': 'ts', 'sequence.field.sort-order': 'descending', 'write-only': 'true' },
    });
    const w = table.newWriter();
    w.writeRecord({ k: 1, ts: 5n, v: 'five' });
    w.commit();
    w.writeRecord({ k: 1, ts: null, v: 'null-seq' });
    w.commit();
    w.close();
    expect(table.scanRows().map((r) => r[2])).toEqual(['five']);
    expect(table.reader().get({ k: 1 })?.[2]).toBe('five');
  });

  // Paimon's PartialUpdateMergeFunction sets `meetInsert` only for +I/+U input and returns a
  // DELETE without one, which DropDeleteReader drops: a retraction never makes a row.
  it('partial-update with sequence groups: a lone -D of a never-inserted key reads as no row (scan and get)', () => {
    const { table } = setup({
      fields: [
        { name: 'k', type: 'INT' },
        { name: 'g1', type: 'INT' },
        { name: 'a', type: 'STRING' },
        { name: 'g2', type: 'INT' },
        { name: 'b', type: 'STRING' },
      ],
      primaryKeys: ['k'],
      options: { bucket: '1', 'merge-engine': 'partial-update', 'fields.g1.sequence-group': 'a', 'fields.g2.sequence-group': 'b' },
    });
    const w = table.newWriter();
    w.writeRecord({ k: 1, g1: 1, a: 'x', g2: 1, b: 'y' });
    w.commit();
    w.writeRecord({ k: 2, g1: 5, a: 'gone', g2: null, b: null }, RowKind.DELETE);
    w.commit();
    w.close();
    expect(table.scanRows()).toEqual([[1, 1, 'x', 1, 'y']]);
    expect(table.reader().get({ k: 2 })).toBeUndefined();
  });

  // The stored sequence of a group no record has set is NULL, the oldest value whatever the
  // declared nullability (Paimon's generated comparator tests isNullAt on both sides): the first
  // record with a non-null group sequence sets the group, also a negative one of a NOT NULL column.
  it('partial-update: a negative NOT NULL group sequence sets its group; an older one does not beat it', () => {
    const { table } = setup({
      fields: [
        { name: 'k', type: 'INT' },
        { name: 's', type: 'INT NOT NULL' },
        { name: 'a', type: 'STRING' },
      ],
      primaryKeys: ['k'],
      options: { bucket: '1', 'merge-engine': 'partial-update', 'fields.s.sequence-group': 'a', 'write-only': 'true' },
    });
    const w = table.newWriter();
    w.writeRecord({ k: 1, s: -5, a: 'x' });
    w.commit();
    w.writeRecord({ k: 1, s: -7, a: 'older' });
    w.commit();
    w.close();
    expect(table.scanRows()).toEqual([[1, -5, 'x']]);
    expect(table.reader().get({ k: 1 })).toEqual([1, -5, 'x']);
  });
});

describe('compaction', () => {
  it('keeps sorted runs at or under the trigger and drops deletes only at the bottom level', () => {
    const { table } = setup({ ...STOCK, options: { bucket: '1', 'num-sorted-run.compaction-trigger': '3' } });
    const w = table.newWriter();
    for (let c = 0; c < 12; c++) {
      for (let i = 0; i < 50; i++) w.writeRecord(row(`k${i}`, 'x', c));
      if (c === 11) for (let i = 0; i < 10; i++) w.writeRecord(row(`k${i}`, 'x', 0), RowKind.DELETE);
      w.commit();
      const runs = table.runsOf(table.buckets(table.latestSnapshot()!)[0]!.files);
      expect(runs.length).toBeLessThanOrEqual(3);
    }
    w.compact(true);
    w.close();
    const files = table.buckets(table.latestSnapshot()!)[0]!.files;
    expect(files.map((f) => f.level)).toEqual(files.map(() => 3)); // num-levels = trigger + 1
    expect(files.reduce((s, f) => s + f.rowCount, 0)).toBe(40);
    expect(files.every((f) => f.deleteRowCount === 0)).toBe(true);
    expect(table.latestSnapshot()!.commitKind).toBe('COMPACT');
    expect(table.scanRows()).toHaveLength(40);
  });

  it('merges uncommitted runs at the stop trigger instead of piling them up, without committing', () => {
    const { table } = setup({ ...STOCK, options: { bucket: '1', 'write-buffer-size': '2 kb', 'num-sorted-run.compaction-trigger': '2', 'num-sorted-run.stop-trigger': '4' } });
    const w = table.newWriter();
    for (let i = 0; i < 2000; i++) w.writeRecord(row(`k${i % 300}`, 'x', i));
    expect(table.latestSnapshot()).toBeUndefined();
    const pendingFiles = readdirSync(join(table.paths.root, 'bucket-0'));
    expect(pendingFiles.length).toBeLessThanOrEqual(4);
    w.commit();
    w.close();
    expect(table.scanRows()).toHaveLength(300);
  });

  it('never disturbs a reader: a reader opened before compaction and expiry reads its snapshot', () => {
    let now = 1_800_000_000_000;
    const { table } = setup({ ...STOCK, options: { bucket: '1', 'snapshot.num-retained.min': '1', 'snapshot.time-retained': '1 ms' } }, () => now);
    const w = table.newWriter();
    for (let i = 0; i < 100; i++) w.writeRecord(row(`k${i}`, 'x', 1));
    w.commit();
    const r = table.reader();
    for (let i = 0; i < 100; i++) w.writeRecord(row(`k${i}`, 'x', 2));
    now += 1000;
    w.commit();
    w.compact(true);
    now += 1000;
    w.expire();
    expect(table.snapshots.exists(r.snapshot!.id)).toBe(true); // pinned
    expect([...r.scan()].every((x) => x[2] === 1)).toBe(true);
    r.close();
    now += 1000;
    w.writeRecord(row('k0', 'x', 3));
    w.commit();
    w.close();
    expect(table.snapshots.exists(1)).toBe(false);
  });

  it('never disturbs a reader of another Table object of the same table in this process', () => {
    // The site's agent and sync engine read through Table objects of their own: pins are per process.
    const { catalog } = setup({ ...STOCK, options: { bucket: '1', 'snapshot.num-retained.min': '1', 'snapshot.num-retained.max': '1' } });
    const writing = catalog.getTable({ database: 'db', table: 't' });
    const reading = catalog.getTable({ database: 'db', table: 't' });
    const w = writing.newWriter();
    w.writeRecord(row('a', 'x', 1));
    w.commit();
    const r = reading.reader(); // pins snapshot 1
    try {
      w.writeRecord(row('a', 'x', 2));
      w.commit();
      w.compact(true);
      w.writeRecord(row('b', 'x', 3));
      w.commit(); // expires every snapshot but the latest, except pinned ones
      expect(writing.snapshots.exists(1)).toBe(true);
      expect([...r.scan()].map((x) => x.slice(0, 3))).toEqual([['a', 'x', 1]]);
    } finally {
      r.close();
    }
    w.writeRecord(row('c', 'x', 4));
    w.commit();
    w.close();
    expect(writing.snapshots.listIds()).toEqual([writing.snapshots.latestId()]); // released by close
  });
});

describe('time-based expiration', () => {
  it('keeps a snapshot while the next one is younger than snapshot.time-retained: every time inside the window stays readable', () => {
    // Paimon's ExpireSnapshotsImpl.expire: snapshot i goes only once snapshot i+1 is older than
    // time-retained; i is the state of every time from its commit up to i+1's.
    let now = 1_800_000_000_000;
    const { table } = setup({ ...STOCK, options: { bucket: '1', 'snapshot.num-retained.min': '1', 'snapshot.time-retained': '1 h' } }, () => now);
    const w = table.newWriter();
    w.writeRecord(row('a', 'x', 1));
    w.commit(); // 1 at t0
    now += 59 * 60_000;
    w.writeRecord(row('a', 'x', 2));
    w.commit(); // 2 at t0 + 59 min
    now += 2 * 60_000; // t0 + 61 min: 1 is older than an hour, 2 is not
    w.expire();
    const halfHourAgo = now - 30 * 60_000; // inside the window, before snapshot 2
    expect(table.snapshots.exists(1)).toBe(true);
    expect(table.scanRows({ timestampMs: halfHourAgo }).map((r) => r[2])).toEqual([1]);
    now += 60 * 60_000; // now 2 is older than an hour too: 1 goes; 2 stays while 3 is young
    w.writeRecord(row('a', 'x', 3));
    w.commit();
    w.expire();
    w.close();
    expect(table.snapshots.listIds()).toEqual([2, 3]);
  });
});

describe('tags and expiration', () => {
  it('keeps a tag readable after its snapshot and files expire; deleting the tag frees them', () => {
    let now = 1_800_000_000_000;
    const { table } = setup({ ...STOCK, options: { bucket: '1', 'snapshot.num-retained.min': '1', 'snapshot.time-retained': '1 s' } }, () => now);
    const w = table.newWriter();
    w.writeRecord(row('a', 'x', 1));
    w.commit();
    table.createTag('keep', 1);
    expect(() => table.createTag('keep')).toThrow(/already exists/);
    expect(() => table.createTag('../evil')).toThrow(/tag/);
    for (let i = 2; i < 6; i++) {
      now += 10_000;
      w.writeRecord(row('a', 'x', i));
      w.commit();
    }
    w.compact(true);
    now += 10_000;
    w.expire();
    expect(table.snapshots.exists(1)).toBe(false);
    expect(table.scanRows({ tag: 'keep' }).map((r) => r[2])).toEqual([1]);
    // The expired snapshot can be tagged again from the tag that holds it; one no tag holds cannot.
    table.createTag('keep-too', 1, 3_600_000);
    expect(table.scanRows({ tag: 'keep-too' }).map((r) => r[2])).toEqual([1]);
    table.deleteTag('keep-too');
    expect(() => table.createTag('nothing', 2)).toThrow(/snapshot 2 does not exist/);
    const tagged = table.buckets(table.tags.get('keep').snapshot)[0]!.files.map((f) => f.fileName);
    expect(tagged.every((n) => existsSync(join(table.paths.root, 'bucket-0', n)))).toBe(true);
    table.deleteTag('keep');
    now += 10_000;
    w.writeRecord(row('a', 'x', 9));
    w.commit();
    now += 10_000; // the snapshot before it expires once the new one is older than time-retained
    w.expire();
    w.close();
    expect(tagged.some((n) => existsSync(join(table.paths.root, 'bucket-0', n)))).toBe(false);
    expect(table.listTags()).toEqual([]);
  });

  it('respects snapshot.num-retained.min and max', () => {
    let now = 1_800_000_000_000;
    const { table } = setup({ ...STOCK, options: { bucket: '1', 'snapshot.num-retained.min': '3', 'snapshot.num-retained.max': '5', 'snapshot.time-retained': '1 d', 'num-sorted-run.compaction-trigger': '50' } }, () => now);
    const w = table.newWriter();
    for (let i = 0; i < 8; i++) {
      now += 1000;
      w.writeRecord(row('a', 'x', i));
      w.commit();
    }
    expect(table.snapshots.listIds()).toEqual([4, 5, 6, 7, 8]); // max 5, time keeps the rest
    now += 2 * 86_400_000;
    w.writeRecord(row('a', 'x', 99));
    w.commit();
    w.close();
    expect(table.snapshots.listIds()).toEqual([7, 8, 9]); // min 3
    expect(readFileSync(table.paths.earliestHint, 'utf8')).toBe('7');
  });

  it('expires a tag whose retention time has passed', () => {
    let now = 1_800_000_000_000;
    const { table } = setup(STOCK, () => now);
    const w = table.newWriter();
    w.writeRecord(row('a', 'x', 1));
    w.commit();
    table.createTag('short', undefined, 60_000);
    table.createTag('long', undefined, 3_600_000);
    now += 120_000;
    const res = w.expire();
    w.close();
    expect(res.expiredTags).toEqual(['short']);
    expect(table.listTags().map((t) => t.name)).toEqual(['long']);
    expect(table.listTags()[0]!.retainedMillis).toBe(3_600_000);
  });

  /** Snapshot 1 (qty 1 for k0…k4) held only by tag t1 (10 minutes), snapshots 2 and 3 retained. */
  function taggedExpired() {
    let now = 1_800_000_000_000;
    const { table } = setup({ ...STOCK, options: { bucket: '1', 'snapshot.num-retained.min': '1', 'snapshot.time-retained': '1 ms' } }, () => now);
    const w = table.newWriter();
    for (let k = 0; k < 5; k++) w.writeRecord(row(`k${k}`, 'x', 1));
    w.commit();
    table.createTag('t1', 1, 10 * 60_000);
    now += 1000;
    for (let k = 0; k < 5; k++) w.writeRecord(row(`k${k}`, 'x', 2));
    w.commit();
    w.compact(true);
    now += 1000;
    w.expire();
    expect(table.snapshots.exists(1)).toBe(false); // only the tag holds snapshot 1's files now
    expect(table.scanRows({ tag: 't1' }).map((r) => r[2])).toEqual([1, 1, 1, 1, 1]);
    return { table, w, advance: (ms: number) => (now += ms) };
  }

  it('keeps the files of a reader at a tag when the tag expires while it reads; frees them after close', () => {
    const { table, w, advance } = taggedExpired();
    const r = table.reader({ tag: 't1' });
    const tagged = table.buckets(r.snapshot!)[0]!.files.map((f) => join(table.paths.root, 'bucket-0', f.fileName));
    try {
      advance(20 * 60_000); // the tag's retention ends while the reader is open
      expect(w.expire().expiredTags).toEqual(['t1']);
      expect([...r.scan()].map((row) => row[2])).toEqual([1, 1, 1, 1, 1]);
    } finally {
      r.close();
    }
    advance(1000);
    w.writeRecord(row('k0', 'x', 3));
    w.commit();
    advance(1000);
    w.expire(); // expires snapshot 3 and sweeps what the closed reader no longer pins
    w.close();
    expect(tagged.some((p) => existsSync(p))).toBe(false);
  });

  it('a diff from a tag keeps the tag\'s files when the tag expires during the read', () => {
    let now = 1_800_000_000_000;
    const { table, catalog } = setup({ ...STOCK, options: { bucket: '2', 'snapshot.num-retained.min': '1', 'snapshot.time-retained': '1 ms' } }, () => now);
    const w = table.newWriter();
    for (let k = 0; k < 20; k++) w.writeRecord(row(`k${k}`, 'x', 1));
    w.commit();
    table.createTag('t1', 1, 10 * 60_000);
    now += 1000;
    for (let k = 0; k < 20; k++) w.writeRecord(row(`k${k}`, 'x', 2));
    w.commit();
    w.compact(true);
    now += 1000;
    w.expire();
    expect(table.snapshots.exists(1)).toBe(false);
    // Read through a Table object of its own (its own run cache), as the sync engine does.
    const reading = catalog.getTable({ database: 'db', table: 't' });
    const changes = reading.changes({ from: 't1', mode: 'diff' })[Symbol.iterator]();
    const first = changes.next(); // the first bucket is read, the second not yet
    now += 20 * 60_000;
    expect(w.expire().expiredTags).toEqual(['t1']);
    const all = [first.value!];
    for (let c = changes.next(); !c.done; c = changes.next()) all.push(c.value);
    w.close();
    expect(all.filter((c) => c.kind === '-U').map((c) => c.row[2])).toEqual(Array(20).fill(1));
    expect(all.filter((c) => c.kind === '+U').map((c) => c.row[2])).toEqual(Array(20).fill(2));
  });

  it('a reader at a tag of an expired snapshot does not hold back the expiration of later snapshots', () => {
    const { table, w, advance } = taggedExpired();
    const r = table.reader({ tag: 't1' }); // pins snapshot 1, below EARLIEST
    try {
      for (let i = 0; i < 3; i++) {
        advance(1000);
        w.writeRecord(row('k0', 'x', 10 + i));
        w.commit();
      }
      advance(1000);
      w.expire();
      expect(table.snapshots.listIds()).toEqual([table.snapshots.latestId()]);
      expect([...r.scan()].map((row) => row[2])).toEqual([1, 1, 1, 1, 1]);
    } finally {
      r.close();
      w.close();
    }
  });

  it('renews a tag: its retention restarts from now, on the same snapshot, and the expiration keeps it', () => {
    let now = 1_800_000_000_000;
    const { table } = setup(STOCK, () => now);
    const w = table.newWriter();
    w.writeRecord(row('a', 'x', 1));
    w.commit();
    table.createTag('evidence', undefined, 4 * 3_600_000);
    table.createTag('forever');
    w.writeRecord(row('a', 'x', 2));
    w.commit();
    now += 3 * 3_600_000;
    const renewed = table.renewTag('evidence');
    expect(renewed).toMatchObject({ name: 'evidence', snapshot: { id: 1 }, retainedMillis: 4 * 3_600_000 });
    expect(table.tags.get('evidence').createTimeMillis).toBe(renewed.createTimeMillis);
    expect(table.renewTag('forever').retainedMillis).toBeUndefined(); // nothing to renew
    now += 2 * 3_600_000; // past the first retention, inside the renewed one
    expect(w.expire().expiredTags).toEqual([]);
    expect(table.scanRows({ tag: 'evidence' }).map((r) => r[2])).toEqual([1]);
    // With less than an hour left it is refused: an expiration may be deleting it.
    now += 90 * 60_000;
    expect(() => table.renewTag('evidence')).toThrow(/cannot renew tag 'evidence': it expires in 30 min/);
    expect(() => table.renewTag('nope')).toThrow(/tag 'nope' does not exist/);
    now += 3_600_000;
    expect(w.expire().expiredTags).toEqual(['evidence']);
    w.close();
  });

  it('removes orphan files older than the threshold, and only those', () => {
    const { table } = setup({ ...STOCK, options: { bucket: '1' } });
    const w = table.newWriter();
    w.writeRecord(row('a', 'x', 1));
    w.commit();
    const bucketDir = join(table.paths.root, 'bucket-0');
    const oldOrphan = join(bucketDir, 'data-00000000-0000-0000-0000-000000000000-0.parquet');
    const newOrphan = join(bucketDir, 'data-00000000-0000-0000-0000-000000000000-1.parquet');
    writeFileSync(oldOrphan, 'x');
    writeFileSync(newOrphan, 'x');
    const past = new Date(Date.now() - 2 * 86_400_000);
    utimesSync(oldOrphan, past, past);
    const removed = w.removeOrphanFiles(86_400_000);
    w.close();
    expect(removed).toEqual([oldOrphan]);
    expect(existsSync(newOrphan)).toBe(true);
    expect(table.scanRows()).toHaveLength(1);
  });

  it('orphan removal keeps the files the writer flushed but has not committed yet', () => {
    const { table } = setup({ ...STOCK, options: { bucket: '1', 'changelog-producer': 'input' } });
    const w = table.newWriter();
    w.writeRecord(row('a', 'x', 1));
    w.commit();
    w.writeRecord(row('b', 'x', 2));
    w.flush(); // a level-0 file and an input-changelog file, pending until the next commit
    expect(w.removeOrphanFiles(0)).toEqual([]);
    w.commit();
    w.close();
    expect(table.scanRows().map((r) => r.slice(0, 3))).toEqual([
      ['a', 'x', 1],
      ['b', 'x', 2],
    ]);
    expect([...table.changes({ from: 1, mode: 'changelog' })].map((c) => [c.kind, c.row[0]])).toEqual([['+I', 'b']]);
  });
});

describe('corruption is reported, never returned as rows', () => {
  function written(): Table {
    const { table } = setup({ ...STOCK, options: { bucket: '1', 'file.compression': 'none' } });
    const w = table.newWriter();
    for (let i = 0; i < 100; i++) w.writeRecord(row(`k${i}`, 'x', i));
    w.commit();
    w.close();
    return table;
  }
  const fresh = (t: Table) => new Catalog(join(t.paths.root, '..', '..')).getTable({ database: 'db', table: 't' });
  const dataFile = (t: Table) => join(t.paths.root, 'bucket-0', readdirSync(join(t.paths.root, 'bucket-0'))[0]!);

  it('a truncated data file', () => {
    const t = written();
    const f = dataFile(t);
    truncateSync(f, statSync(f).size - 10);
    let err: unknown;
    try {
      fresh(t).scanRows();
    } catch (e) {
      err = e;
    }
    expect(isCorruption(err)).toBe(true);
    expect((err as Error).message).toContain(f);
  });

  it('a flipped bit in a data file', () => {
    const t = written();
    const f = dataFile(t);
    const b = readFileSync(f);
    b[Math.floor(b.length / 3)] ^= 0x10;
    writeFileSync(f, b);
    expect(() => fresh(t).scanRows()).toThrow(LsmError);
    try {
      fresh(t).scanRows();
    } catch (e) {
      expect(isCorruption(e)).toBe(true);
    }
  });

  it('a manifest list cut right after its Avro header or a block (a well-formed, shorter container)', () => {
    const t = written();
    const w = t.newWriter();
    w.writeRecord(row('k100', 'y', 100));
    w.commit();
    w.close();
    const s = t.latestSnapshot()!;
    const list = t.paths.manifestFile(s.deltaManifestList);
    const bytes = readFileSync(list);
    // Every block ends with the file's sync marker, and so does the header: cut after the first one.
    const sync = bytes.subarray(bytes.length - 16);
    const headerEnd = bytes.indexOf(sync) + 16;
    expect(headerEnd).toBeGreaterThan(16);
    expect(headerEnd).toBeLessThan(bytes.length);
    truncateSync(list, headerEnd);
    expect(() => fresh(t).scanRows()).toThrow(new RegExp(`corruption in ${list}: size ${headerEnd} differs from the snapshot's ${bytes.length}`));
  });

  it('a damaged snapshot file and a missing manifest', () => {
    const t = written();
    writeFileSync(t.paths.snapshotFile(1), '{"version": 3, "id": 1, ');
    expect(() => fresh(t).scanRows()).toThrow(/corruption in .*snapshot-1/);
    const t2 = written();
    const manifests = readdirSync(t2.paths.manifestDir).filter((n) => n.startsWith('manifest-') && !n.startsWith('manifest-list'));
    rmSync(join(t2.paths.manifestDir, manifests[0]!));
    expect(() => fresh(t2).scanRows()).toThrow(/corruption in .*manifest.*missing/);
  });
});

describe('independent readers accept what we write', () => {
  const check = paimonCheckAvailable('the paimon-check test of a partitioned, compacted, tagged table');

  it.skipIf(!check)('paimon-check (Apache Avro) finds no problem in a partitioned, compacted, tagged table', () => {
    const { table } = setup({ ...STOCK, partitionKeys: ['location'], options: { bucket: '3', 'num-sorted-run.compaction-trigger': '2' } });
    const w = table.newWriter();
    for (let c = 0; c < 4; c++) {
      for (let i = 0; i < 200; i++) w.writeRecord(row(`item-${i}`, `loc-${i % 3}`, c));
      w.commit();
    }
    table.createTag('t1');
    w.compact(true);
    w.close();
    const r = paimonCheck(table.paths.root);
    expect(r.output).toMatch(/paimon-check: 0 problems/);
    expect(r.status).toBe(0);
  });

  it('hyparquet reads our data files with Paimon column names and the same values', async () => {
    const { table } = setup({ ...STOCK, options: { bucket: '1' } });
    const w = table.newWriter();
    for (let i = 0; i < 50; i++) w.writeRecord(row(`k${String(i).padStart(2, '0')}`, 'x', i));
    w.commit();
    w.close();
    const f = join(table.paths.root, 'bucket-0', readdirSync(join(table.paths.root, 'bucket-0'))[0]!);
    const buf = readFileSync(f);
    const file = buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength);
    const rows = (await parquetReadObjects({ file, compressors })) as Array<Record<string, unknown>>;
    expect(Object.keys(rows[0]!)).toEqual(['_KEY_item', '_KEY_location', '_SEQUENCE_NUMBER', '_VALUE_KIND', 'item', 'location', 'qty', 'price', 'updated']);
    expect(rows).toHaveLength(50);
    expect(rows[7]!.item).toBe('k07');
    expect(rows[7]!.qty).toBe(7);
    expect(Number(rows[7]!._VALUE_KIND)).toBe(0);
  });
});

describe('snapshot properties', () => {
  it('commits properties atomically with rows, carries them through compaction, and commits progress alone', () => {
    const { table } = setup({ ...STOCK, options: { bucket: '1', 'num-sorted-run.compaction-trigger': '2' } });
    const w = table.newWriter();
    w.writeRecord(row('a', 'x', 1));
    expect(w.commit({ 'tilstand.hwm.inventory/stock': '5' }).snapshotId).toBe(1);
    w.writeRecord(row('a', 'x', 2));
    w.commit({ 'tilstand.hwm.inventory/stock': '6' });
    w.writeRecord(row('a', 'x', 3));
    const r = w.commit({ 'tilstand.hwm.commerce/res': '1' });
    expect(r.compactSnapshotId).toBeDefined();
    expect(table.latestSnapshot()!.commitKind).toBe('COMPACT');
    expect(table.committedProperties()).toEqual({ 'tilstand.hwm.inventory/stock': '6', 'tilstand.hwm.commerce/res': '1' });
    const before = table.latestSnapshot()!.id;
    expect(w.commit({ 'tilstand.hwm.commerce/res': '1' }).snapshotId).toBeUndefined(); // nothing new
    expect(w.commit({ 'tilstand.hwm.commerce/res': '2' }).snapshotId).toBe(before + 1); // progress alone
    w.close();
    expect(JSON.parse(readFileSync(table.paths.snapshotFile(before + 1), 'utf8')).properties).toEqual({
      'tilstand.hwm.inventory/stock': '6',
      'tilstand.hwm.commerce/res': '2',
    });
  });
});

describe('writer maintenance on a fresh writer', () => {
  it('compacts buckets it has not written to when the picker says so', () => {
    const { table } = setup({ ...STOCK, options: { bucket: '1', 'write-only': 'true', 'num-sorted-run.compaction-trigger': '2' } });
    for (let i = 0; i < 4; i++) {
      const w = table.newWriter();
      w.writeRecord(row(`k${i}`, 'x', i));
      w.commit();
      w.close();
    }
    const w = table.newWriter();
    expect(w.compact(false)).toBeDefined();
    w.close();
    expect(table.runsOf(table.buckets(table.latestSnapshot()!)[0]!.files).length).toBeLessThan(4);
  });

  it('checks scan arguments even on an empty table', () => {
    const { table } = setup();
    expect(() => table.reader().scan({ projection: ['nope'] })).toThrow(/unknown column 'nope'/);
  });
});
