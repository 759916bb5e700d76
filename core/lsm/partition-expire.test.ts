// Partition expiration at commit (`partition.expiration-time`; DESIGN.md, "Partition expiration";
// partition-expire.ts), after Java's NormalPartitionExpire and FileStoreCommitImpl.dropPartitions:
// once per check interval a commit drops the partitions older than the expiration time in one
// OVERWRITE snapshot that DELETEs their files; older snapshots and tags still read them, and their
// files go only when no retained snapshot or tag references them. Partitions whose values give no
// time are kept, and the caller is told. Write-only writers never expire partitions.

import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { LsmError } from './errors.ts';
import { ADD, DELETE, decodeIndexManifest } from './manifest.ts';
import { PartitionTimeExtractor, compileFormatter } from './partition-expire.ts';
import { TableSchema, type SchemaSpec } from './schema.ts';
import { Table } from './table.ts';
import type { PartitionExpireResult } from './table-writer.ts';
import { paimonCheck, paimonCheckAvailable } from './testing/shared.ts';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function freshDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'lsm-partition-expire-'));
  dirs.push(d);
  return d;
}

// Java's first check comes a random part of the interval after the writer opens; at 0 it is the
// whole interval, so the tests know when a check is due.
beforeEach(() => {
  vi.spyOn(Math, 'random').mockReturnValue(0);
});
afterEach(() => {
  vi.restoreAllMocks();
});

const HOUR = 3_600_000;
const MIN = 60_000;
const DAYS = ['2026-12-01', '2026-12-02', '2026-12-03', '2026-12-04', '2026-12-05', '2026-12-06'];

/** A daily-partitioned primary-key table (dt, k). */
const DAILY = (options: Record<string, string>): SchemaSpec => ({
  fields: [{ name: 'dt', type: 'STRING NOT NULL' }, { name: 'k', type: 'INT NOT NULL' }, { name: 'v', type: 'STRING' }],
  partitionKeys: ['dt'],
  primaryKeys: ['dt', 'k'],
  options: { bucket: '1', 'file.compression': 'snappy', 'partition.expiration-time': '2 d', ...options },
});

/** Local noon of 2026-12-06: values-time compares the local wall clock with the partition's time, as Java's LocalDateTime.now(). */
const NOON_DEC_6 = new Date(2026, 11, 6, 12, 0, 0).getTime();

const days = (rows: unknown[][]): string[] => [...new Set(rows.map((r) => r[0] as string))].sort();

function deltaEntries(t: Table, id: number) {
  const s = t.snapshots.get(id);
  return t.manifests.readList(s.deltaManifestList, s.deltaManifestListSize).flatMap((m) => t.manifests.readManifest(m));
}

function dataFilesUnder(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((f) => /data-.*\.parquet$/.test(f));
}

describe('partition expiration at commit (values-time)', () => {
  it('drops the partitions older than 2 d in one OVERWRITE snapshot once the check interval has passed; older snapshots and tags still read them', () => {
    let now = NOON_DEC_6;
    const dir = freshDir();
    const t = Table.create(dir, TableSchema.fromSpec(DAILY({}), now), { clock: () => now });
    const w = t.newWriter({ commitUser: 'expiry-test' });
    DAYS.forEach((dt, i) => {
      w.writeRecord({ dt, k: 1, v: `a${i}` });
      w.writeRecord({ dt, k: 2, v: `b${i}` });
    });
    const first = w.commit({ 'hw.mod': '12' });
    expect(first.partitions).toBeUndefined(); // the interval (1 h) starts when the writer opens
    t.createTag('before');

    now += 30 * MIN;
    w.writeRecord({ dt: '2026-12-06', k: 3, v: 'c' });
    const early = w.commit();
    expect(early.partitions).toBeUndefined(); // not yet an hour
    expect(days(t.scanRows())).toEqual(DAYS);

    now += 31 * MIN; // 13:01: everything before 2026-12-04 13:01 is expired
    w.writeRecord({ dt: '2026-12-06', k: 4, v: 'd' });
    const r = w.commit();
    expect(r.partitions).toEqual<PartitionExpireResult>({
      snapshotIds: [r.snapshotId! + 1],
      dropped: ['dt=2026-12-01', 'dt=2026-12-02', 'dt=2026-12-03', 'dt=2026-12-04'],
      skipped: [],
    });
    const appendSnap = t.snapshots.get(r.snapshotId!);
    const drop = t.snapshots.get(r.partitions!.snapshotIds[0]!);
    expect(t.latestSnapshot()!.id).toBe(drop.id);
    // What Java's dropPartitions writes: an OVERWRITE with the commit's user and identifier, every
    // file of the partitions DELETEd, nothing added, no changelog; record counts go down.
    expect(drop.commitKind).toBe('OVERWRITE');
    expect(drop.commitUser).toBe('expiry-test');
    expect(drop.commitIdentifier).toBe(appendSnap.commitIdentifier);
    expect(drop.deltaRecordCount).toBe(-8);
    expect(drop.totalRecordCount).toBe(appendSnap.totalRecordCount! - 8);
    expect(drop.changelogManifestList).toBeNull();
    expect(drop.indexManifest).toBeNull();
    expect(drop.properties).toEqual({ 'hw.mod': '12' }); // carried, as every commit here carries them
    const entries = deltaEntries(t, drop.id);
    expect(entries.every((e) => e.kind === DELETE)).toBe(true);
    expect([...new Set(entries.map((e) => t.partitionPathOf(e.partition)))].sort()).toEqual(['dt=2026-12-01', 'dt=2026-12-02', 'dt=2026-12-03', 'dt=2026-12-04']);

    expect(days(t.scanRows())).toEqual(['2026-12-05', '2026-12-06']);
    expect(days(t.scanRows({ snapshotId: appendSnap.id }))).toEqual(DAYS);
    expect(days(t.scanRows({ tag: 'before' }))).toEqual(DAYS);

    // The writer goes on: a kept partition is updated, a dropped one written again (Java writes it
    // too; the next check drops it again).
    now += 10 * MIN;
    w.writeRecord({ dt: '2026-12-05', k: 1, v: 'a4-new' });
    w.writeRecord({ dt: '2026-12-01', k: 9, v: 'late' });
    expect(w.commit().partitions).toBeUndefined(); // checked 10 minutes ago
    expect(t.scanRows().filter((row) => row[0] === '2026-12-05' || row[0] === '2026-12-01')).toEqual([
      ['2026-12-01', 9, 'late'],
      ['2026-12-05', 1, 'a4-new'],
      ['2026-12-05', 2, 'b4'],
    ]);
    now += 55 * MIN;
    expect(w.commit().partitions?.dropped).toEqual(['dt=2026-12-01']); // an empty commit checks too, as Java's
    w.close();
    expect(days(t.scanRows())).toEqual(['2026-12-05', '2026-12-06']);
    if (paimonCheckAvailable('the paimon-check part of the partition expiration test')) {
      expect(paimonCheck(t.paths.root).output).toMatch(/paimon-check: 0 problems/);
    }
  });

  it("keeps the dropped partitions' files while a snapshot or tag references them, deletes them after", () => {
    let now = NOON_DEC_6;
    const dir = freshDir();
    const t = Table.create(
      dir,
      TableSchema.fromSpec(DAILY({ 'partition.expiration-check-interval': '0 s', 'snapshot.num-retained.min': '1', 'snapshot.time-retained': '1 ms' }), now),
      { clock: () => now },
    );
    const w = t.newWriter();
    now -= 3 * 24 * HOUR; // written three days ago (threshold 2026-12-01 12:00): nothing expired yet
    const old = DAYS.slice(1, 4);
    for (const dt of old) w.writeRecord({ dt, k: 1, v: dt });
    expect(w.commit().partitions?.dropped).toEqual([]);
    t.createTag('old');
    now = NOON_DEC_6;
    w.writeRecord({ dt: '2026-12-06', k: 1, v: 'today' });
    const r = w.commit();
    expect(r.partitions?.dropped).toEqual(old.map((dt) => `dt=${dt}`));
    // A minute later the snapshots that held them have expired (the dropping one is the newest
    // older than 1 ms, kept as the state up to the next); the tag keeps the dropped partitions' files.
    now += MIN;
    w.writeRecord({ dt: '2026-12-06', k: 2, v: 'more' });
    const later = w.commit();
    expect(t.snapshots.listIds()).toEqual([r.partitions!.snapshotIds[0], later.snapshotId]);
    for (const dt of old) expect(dataFilesUnder(join(dir, `dt=${dt}`))).toHaveLength(1);
    expect(days(t.scanRows({ tag: 'old' }))).toEqual(old);
    expect(days(t.scanRows())).toEqual(['2026-12-06']);

    t.deleteTag('old');
    now += MIN;
    w.writeRecord({ dt: '2026-12-06', k: 2, v: 'more' });
    w.commit();
    w.close();
    for (const dt of old) expect(dataFilesUnder(join(dir, `dt=${dt}`))).toEqual([]);
    expect(dataFilesUnder(join(dir, 'dt=2026-12-06')).length).toBeGreaterThan(0);
    expect(t.scanRows()).toEqual([
      ['2026-12-06', 1, 'today'],
      ['2026-12-06', 2, 'more'],
    ]);
  });

  it('a deletion-vector table: the index manifest of the dropping snapshot leaves out the dropped partitions\' vectors', () => {
    let now = NOON_DEC_6;
    const dir = freshDir();
    const t = Table.create(dir, TableSchema.fromSpec(DAILY({ 'deletion-vectors.enabled': 'true', 'partition.expiration-check-interval': '0 s' }), now), { clock: () => now });
    now -= 3 * 24 * HOUR;
    const w = t.newWriter();
    for (const dt of ['2026-12-02', '2026-12-05']) for (let k = 0; k < 4; k++) w.writeRecord({ dt, k, v: `${dt}-${k}` });
    w.commit();
    w.compact(true); // into the top level, so the update below marks rows there
    now += MIN;
    for (const dt of ['2026-12-02', '2026-12-05']) w.writeRecord({ dt, k: 1, v: 'changed' });
    w.commit();
    const before = t.latestSnapshot()!;
    const indexOf = (name: string | null) => (name === null ? [] : decodeIndexManifest(readFileSync(t.paths.manifestFile(name)), name));
    expect(new Set(indexOf(before.indexManifest).map((e) => t.partitionPathOf(e.partition)))).toEqual(new Set(['dt=2026-12-02', 'dt=2026-12-05']));

    now = NOON_DEC_6;
    const r = w.commit();
    w.close();
    expect(r.partitions?.dropped).toEqual(['dt=2026-12-02']);
    const drop = t.latestSnapshot()!;
    expect(drop.commitKind).toBe('OVERWRITE');
    const kept = indexOf(drop.indexManifest);
    expect(kept.length).toBeGreaterThan(0);
    expect(kept.every((e) => e.kind === ADD && t.partitionPathOf(e.partition) === 'dt=2026-12-05')).toBe(true);
    // A deletion-vector table reads file by file: order by key.
    expect(t.scanRows().sort((a, b) => (a[1] as number) - (b[1] as number))).toEqual([0, 1, 2, 3].map((k) => ['2026-12-05', k, k === 1 ? 'changed' : `2026-12-05-${k}`]));
    expect(t.scanRows({ snapshotId: before.id }).filter((row) => row[0] === '2026-12-02')).toHaveLength(4);
    if (paimonCheckAvailable('the paimon-check part of the deletion-vector partition expiration test')) {
      expect(paimonCheck(t.paths.root).output).toMatch(/paimon-check: 0 problems/);
    }
  });

  it('partition.expiration-max-num and partition.expiration-batch-size: at most max-num per check, one OVERWRITE snapshot per batch, in the order of the values', () => {
    const now = NOON_DEC_6;
    const dir = freshDir();
    const t = Table.create(
      dir,
      TableSchema.fromSpec(DAILY({ 'partition.expiration-check-interval': '0 s', 'partition.expiration-max-num': '3', 'partition.expiration-batch-size': '2' }), now),
      { clock: () => now },
    );
    const w = t.newWriter();
    for (const dt of [...DAYS].reverse()) w.writeRecord({ dt, k: 1, v: dt });
    const r = w.commit();
    expect(r.partitions?.dropped).toEqual(['dt=2026-12-01', 'dt=2026-12-02', 'dt=2026-12-03']);
    expect(r.partitions?.snapshotIds).toHaveLength(2);
    expect(r.partitions!.snapshotIds.map((id) => deltaEntries(t, id).length)).toEqual([2, 1]);
    expect(days(t.scanRows())).toEqual(['2026-12-04', '2026-12-05', '2026-12-06']);
    expect(w.commit().partitions?.dropped).toEqual(['dt=2026-12-04']); // the next check takes the rest
    w.close();
  });
});

describe('partitions whose values give no time', () => {
  it('are kept and told to onWarning and in the commit result (an append table, a formatter, a null value)', () => {
    const now = NOON_DEC_6;
    const dir = freshDir();
    const spec: SchemaSpec = {
      fields: [{ name: 'dt', type: 'STRING' }, { name: 'n', type: 'INT' }],
      partitionKeys: ['dt'],
      options: { bucket: '-1', 'file.compression': 'snappy', 'partition.expiration-time': '2 d', 'partition.expiration-check-interval': '0 s', 'partition.timestamp-formatter': 'yyyyMMdd' },
    };
    const t = Table.create(dir, TableSchema.fromSpec(spec, now), { clock: () => now });
    const warnings: string[] = [];
    const w = t.newWriter({ onWarning: (m) => warnings.push(m) });
    for (const dt of ['20261201', 'not-a-day', null, '20261206']) w.writeRecord({ dt, n: 1 });
    const r = w.commit();
    w.close();
    expect(r.partitions?.dropped).toEqual(['dt=20261201']);
    expect(r.partitions?.skipped.map((s) => s.partition).sort()).toEqual(['dt=__DEFAULT_PARTITION__', 'dt=not-a-day']);
    expect(warnings).toHaveLength(2);
    expect(warnings.find((m) => m.includes("'dt=not-a-day'"))).toMatch(/is not expired: no time can be read from its values: 'not-a-day' does not match 'partition.timestamp-formatter' 'yyyyMMdd'/);
    expect(warnings.find((m) => m.includes('__DEFAULT_PARTITION__'))).toMatch(/contains a null value/);
    expect(t.scanRows().map((row) => row[0]).sort()).toEqual(['20261206', 'not-a-day', null].sort());
  });

  it('without onWarning they go to process warnings', () => {
    const now = NOON_DEC_6;
    const t = Table.create(freshDir(), TableSchema.fromSpec(DAILY({ 'partition.expiration-check-interval': '0 s' }), now), { clock: () => now });
    const emitted = vi.spyOn(process, 'emitWarning').mockImplementation(() => undefined);
    const w = t.newWriter();
    w.writeRecord({ dt: 'yesterday', k: 1, v: 'x' });
    w.commit();
    w.close();
    expect(emitted).toHaveBeenCalledTimes(1);
    expect(String(emitted.mock.calls[0]![0])).toMatch(/partition 'dt=yesterday' is not expired/);
  });
});

describe('partition.expiration-strategy = update-time', () => {
  it("judges a partition by its newest file's creation time", () => {
    let now = NOON_DEC_6;
    const t = Table.create(freshDir(), TableSchema.fromSpec(DAILY({ 'partition.expiration-strategy': 'update-time', 'partition.expiration-check-interval': '0 s' }), now), { clock: () => now });
    const w = t.newWriter();
    w.writeRecord({ dt: 'old', k: 1, v: 'x' });
    w.writeRecord({ dt: 'touched', k: 1, v: 'x' });
    expect(w.commit().partitions?.dropped).toEqual([]);
    now += 2 * 24 * HOUR - MIN;
    w.writeRecord({ dt: 'touched', k: 2, v: 'y' }); // a newer file in 'touched'
    expect(w.commit().partitions?.dropped).toEqual([]);
    now += 2 * MIN; // 'old' last written 2 d + 1 min ago, 'touched' 2 min ago
    expect(w.commit().partitions?.dropped).toEqual(['dt=old']);
    w.close();
    expect(days(t.scanRows())).toEqual(['touched']);
  });
});

describe('write-only writers', () => {
  it('never expire partitions (Java skips it there); the same table without write-only does', () => {
    const now = NOON_DEC_6;
    const dir = freshDir();
    const t = Table.create(dir, TableSchema.fromSpec(DAILY({ 'write-only': 'true', 'partition.expiration-check-interval': '0 s' }), now), { clock: () => now });
    const w = t.newWriter();
    for (const dt of DAYS) w.writeRecord({ dt, k: 1, v: dt });
    expect(w.commit().partitions).toBeUndefined();
    expect(w.commit().partitions).toBeUndefined();
    w.close();
    expect(days(t.scanRows())).toEqual(DAYS);
    t.alter([{ kind: 'setOption', key: 'write-only', value: 'false' }]);
    const w2 = t.newWriter();
    expect(w2.commit().partitions?.dropped).toEqual(['dt=2026-12-01', 'dt=2026-12-02', 'dt=2026-12-03', 'dt=2026-12-04']);
    w2.close();
  });
});

describe('options', () => {
  const refusal = (f: () => unknown): LsmError => {
    try {
      f();
    } catch (e) {
      expect(e).toBeInstanceOf(LsmError);
      return e as LsmError;
    }
    throw new Error('expected a refusal');
  };

  it.each([
    ['partition.expiration-time', 'soon', "option 'partition.expiration-time': expected a duration"],
    ['partition.expiration-check-interval', '1 fortnight', "option 'partition.expiration-check-interval': expected a duration"],
    ['partition.expiration-strategy', 'VALUES-TIME', "option 'partition.expiration-strategy': expected 'values-time' or 'update-time', got 'VALUES-TIME'"],
    ['partition.expiration-max-num', '-1', "option 'partition.expiration-max-num': expected an integer in 0..2147483647, got -1"],
    ['partition.expiration-batch-size', 'two', "option 'partition.expiration-batch-size': expected an integer, got 'two'"],
    ['partition.timestamp-format.strict', 'yes', "option 'partition.timestamp-format.strict': expected 'true' or 'false', got 'yes'"],
  ])("a bad '%s' ('%s') is refused at creation, naming the option and what was expected", (key, value, message) => {
    const e = refusal(() => Table.create(freshDir(), TableSchema.fromSpec(DAILY({ [key]: value }), 0)));
    expect(e.kind).toBe('InvalidArgument');
    expect(e.message).toContain(message);
  });

  it('a bad value in a table Java made refuses its writer, naming the option; the table still reads', () => {
    const dir = freshDir();
    const t = Table.create(dir, TableSchema.fromSpec(DAILY({}), 0));
    const w = t.newWriter();
    w.writeRecord({ dt: '2026-12-01', k: 1, v: 'x' });
    w.commit();
    w.close();
    const json = JSON.parse(readFileSync(join(dir, 'schema', 'schema-0'), 'utf8')) as { id: number; options: Record<string, string> };
    writeFileSync(join(dir, 'schema', 'schema-1'), JSON.stringify({ ...json, id: 1, options: { ...json.options, 'partition.expiration-strategy': 'custom' } }));
    const j = Table.open(dir);
    expect(j.scanRows()).toHaveLength(1);
    expect(refusal(() => j.newWriter()).message).toContain("option 'partition.expiration-strategy': expected 'values-time' or 'update-time', got 'custom'");
  });

  it('a formatter with letters not parsed here refuses creation and a writer, naming partition.timestamp-formatter', () => {
    const e = refusal(() => Table.create(freshDir(), TableSchema.fromSpec(DAILY({ 'partition.timestamp-formatter': 'dd MMM yyyy' }), 0)));
    expect(e.kind).toBe('NotSupported');
    expect(e.message).toContain("option 'partition.timestamp-formatter' = 'dd MMM yyyy' is not supported for writing");
    // Unused (update-time, or write-only): no refusal.
    Table.create(freshDir(), TableSchema.fromSpec(DAILY({ 'partition.timestamp-formatter': 'dd MMM yyyy', 'partition.expiration-strategy': 'update-time' }), 0)).newWriter().close();
  });

  it('partition.timestamp-format.strict refuses a row whose partition gives no time (Java checks at write)', () => {
    const t = Table.create(freshDir(), TableSchema.fromSpec(DAILY({ 'partition.timestamp-formatter': 'yyyy-MM-dd', 'partition.timestamp-format.strict': 'true' }), 0));
    const w = t.newWriter();
    w.writeRecord({ dt: '2026-12-01', k: 1, v: 'x' });
    const e = refusal(() => w.writeRecord({ dt: '2026/12/01', k: 1, v: 'x' }));
    expect(e.kind).toBe('InvalidArgument');
    expect(e.message).toContain("partition dt=2026/12/01 does not match the 'partition.timestamp-formatter' or 'partition.timestamp-pattern' configuration");
    w.commit();
    w.close();
    expect(t.scanRows()).toEqual([['2026-12-01', 1, 'x']]);
  });
});

describe('the time of partition values (Java PartitionTimeExtractor)', () => {
  const wall = (y: number, mo: number, d: number, h = 0, mi = 0, s = 0): number => Date.UTC(y, mo - 1, d, h, mi, s);

  it('without a formatter: yyyy-M-d with an optional time, resolved leniently', () => {
    const x = new PartitionTimeExtractor(undefined, undefined);
    expect(x.extract(['dt'], ['2026-12-01'])).toBe(wall(2026, 12, 1));
    expect(x.extract(['dt'], ['2026-1-5'])).toBe(wall(2026, 1, 5));
    expect(x.extract(['dt'], ['2026-12-01 10:15:30'])).toBe(wall(2026, 12, 1, 10, 15, 30));
    expect(x.extract(['dt'], ['2026-12-01 10:15:30.5'])).toBe(wall(2026, 12, 1, 10, 15, 30) + 500);
    expect(x.extract(['dt'], ['2026-13-01'])).toBe(wall(2027, 1, 1)); // LENIENT
    expect(() => x.extract(['dt'], ['20261201'])).toThrow(/is not a date/);
    expect(() => x.extract(['dt'], ['2026-12-01 10'])).toThrow(/is not a date/);
  });

  it('a pattern of several keys (longer keys first) and a formatter', () => {
    const x = new PartitionTimeExtractor('$dt $hour:00:00', undefined);
    expect(x.extract(['dt', 'hour'], ['2026-12-01', '7'])).toBe(wall(2026, 12, 1, 7));
    const y = new PartitionTimeExtractor('$year-$month-$day', 'yyyy-MM-dd');
    expect(y.extract(['year', 'month', 'day'], ['2026', '12', '01'])).toBe(wall(2026, 12, 1));
    const z = new PartitionTimeExtractor('$dt$dt1', 'yyyyMMddHH');
    expect(z.extract(['dt', 'dt1'], ['20261201', '09'])).toBe(wall(2026, 12, 1, 9));
    const q = new PartitionTimeExtractor(undefined, "yyyy/MM/dd'T'HH:mm");
    expect(q.extract(['dt'], ['2026/12/01T23:59'])).toBe(wall(2026, 12, 1, 23, 59));
    expect(() => q.extract(['dt'], ['2026/13/01T23:59'])).toThrow(/a month out of range/); // SMART
    expect(new PartitionTimeExtractor(undefined, 'yyyyMMdd').extract(['dt'], ['20260231'])).toBe(wall(2026, 2, 28)); // SMART clips the day
    expect(typeof compileFormatter('dd MMM yyyy')).toBe('string');
    expect(typeof compileFormatter("yyyy-MM-dd'T'HH:mm:ss.SSS")).toBe('object');
  });
});
