// Partition expiration on demand (DESIGN.md, "Partition expiration", "On demand"), after Java's
// `expire_partitions` procedure: `Table.expirePartitions`, `TableWriter.expirePartitionsNow` and
// `tilstand table expire-partitions` drop now, with no check interval, what the table's
// partition-expiration options — or the arguments given, for that call only — say is expired.

import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Catalog, parseIdentifier } from './catalog.ts';
import { runTableCli } from './cli/table-cli.ts';
import { LsmError } from './errors.ts';
import { DELETE } from './manifest.ts';
import { TableSchema, type SchemaSpec } from './schema.ts';
import { Table } from './table.ts';
import { runCli } from './testing/cli.ts';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function freshDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'lsm-partition-expire-now-'));
  dirs.push(d);
  return d;
}

const HOUR = 3_600_000;
const MIN = 60_000;
/** Local noon of 2026-12-06 (values-time compares local wall clocks, as Java's LocalDateTime.now()). */
const NOON_DEC_6 = new Date(2026, 11, 6, 12, 0, 0).getTime();

/** A daily-partitioned primary-key table whose partition values are 'yyyyMMdd' (no expiration option unless given). */
const COMPACT_DAYS = (options: Record<string, string> = {}): SchemaSpec => ({
  fields: [{ name: 'dt', type: 'STRING NOT NULL' }, { name: 'k', type: 'INT NOT NULL' }, { name: 'v', type: 'STRING' }],
  partitionKeys: ['dt'],
  primaryKeys: ['dt', 'k'],
  options: { bucket: '1', 'file.compression': 'snappy', ...options },
});
const DAYS = ['20261201', '20261202', '20261203', '20261204', '20261205', '20261206'];

const days = (rows: unknown[][]): string[] => [...new Set(rows.map((r) => r[0] as string))].sort();

function filled(options: Record<string, string> = {}, clock: () => number = () => NOON_DEC_6): Table {
  const t = Table.create(freshDir(), TableSchema.fromSpec(COMPACT_DAYS(options), clock()), { clock });
  const w = t.newWriter({ commitUser: 'fill' });
  DAYS.forEach((dt, i) => w.writeRecord({ dt, k: 1, v: `a${i}` }));
  w.commit();
  w.close();
  return t;
}

function refusal(f: () => unknown): LsmError {
  try {
    f();
  } catch (e) {
    if (e instanceof LsmError) return e;
    throw e;
  }
  throw new Error('expected a refusal');
}

describe('Table.expirePartitions (values-time)', () => {
  it('drops now, with a formatter given as an argument, on a table without partition.expiration-time; an older tag still reads the rows; nothing persists', () => {
    const t = filled();
    t.createTag('before');
    const schemaBefore = readFileSync(t.paths.schemaFile(0), 'utf8');
    const latestBefore = t.latestSnapshot()!.id;
    // Threshold 2026-12-04 12:00: 01–04 are older (04 is its midnight).
    const r = t.expirePartitions({ expirationTime: '2 d', timestampFormatter: 'yyyyMMdd' });
    expect(r).toEqual({ dryRun: false, partitions: ['dt=20261201', 'dt=20261202', 'dt=20261203', 'dt=20261204'], snapshotIds: [latestBefore + 1], skipped: [] });
    const drop = t.latestSnapshot()!;
    expect(drop.id).toBe(latestBefore + 1);
    expect(drop.commitKind).toBe('OVERWRITE');
    const s = t.snapshots.get(drop.id);
    const entries = t.manifests.readList(s.deltaManifestList, s.deltaManifestListSize).flatMap((m) => t.manifests.readManifest(m));
    expect(entries.every((e) => e.kind === DELETE)).toBe(true);
    expect(days(t.scanRows())).toEqual(['20261205', '20261206']);
    expect(days(t.scanRows({ tag: 'before' }))).toEqual(DAYS);
    expect(days(t.scanRows({ snapshotId: latestBefore }))).toEqual(DAYS);

    // The arguments stood in for this call only: no new schema, the same options, and a later
    // commit (the table has no partition.expiration-time) drops nothing.
    expect(readdirSync(t.paths.schemaDir)).toEqual(['schema-0']);
    expect(readFileSync(t.paths.schemaFile(0), 'utf8')).toBe(schemaBefore);
    const reopened = Table.open(t.paths.root, { clock: () => NOON_DEC_6 + 2 * HOUR });
    expect(reopened.schema.options.raw['partition.expiration-time']).toBeUndefined();
    expect(reopened.schema.options.raw['partition.timestamp-formatter']).toBeUndefined();
    const w = reopened.newWriter();
    w.writeRecord({ dt: '20261205', k: 2, v: 'x' });
    expect(w.commit().partitions).toBeUndefined();
    w.close();
    // Without the formatter the table's values do not parse as dates: kept, and said why.
    const again = reopened.expirePartitions({ expirationTime: '2 d' });
    expect(again.partitions).toEqual([]);
    expect(again.skipped.map((k) => k.partition)).toEqual(['dt=20261205', 'dt=20261206']);
    expect(again.skipped[0]!.reason).toMatch(/no time can be read/);
  });

  it("uses the table's own options without arguments, whatever the check interval, and --max-expires limits the count", () => {
    const t = filled({ 'partition.expiration-time': '2 d', 'partition.timestamp-formatter': 'yyyyMMdd', 'partition.expiration-check-interval': '1 d' });
    // A writer just opened would not check for a day; on demand drops at once, at most 3.
    const r = t.expirePartitions({ maxExpires: 3 });
    expect(r.partitions).toEqual(['dt=20261201', 'dt=20261202', 'dt=20261203']);
    expect(t.expirePartitions({}).partitions).toEqual(['dt=20261204']);
    expect(t.expirePartitions({}).partitions).toEqual([]);
    // An argument overrides the table's option: 12 h moves the threshold to 2026-12-06 00:00.
    expect(t.expirePartitions({ expirationTime: '12 h' }).partitions).toEqual(['dt=20261205']);
    expect(days(t.scanRows())).toEqual(['20261206']);
  });

  it('--dry-run selects and writes nothing', () => {
    const t = filled({ 'partition.expiration-time': '2 d', 'partition.timestamp-formatter': 'yyyyMMdd' });
    const list = () => [readdirSync(t.paths.snapshotDir).sort(), readdirSync(t.paths.manifestDir).sort()];
    const before = list();
    const r = t.expirePartitions({ dryRun: true });
    expect(r).toEqual({ dryRun: true, partitions: ['dt=20261201', 'dt=20261202', 'dt=20261203', 'dt=20261204'], snapshotIds: [], skipped: [] });
    expect(list()).toEqual(before);
    expect(days(t.scanRows())).toEqual(DAYS);
  });
});

describe('Table.expirePartitions (update-time)', () => {
  it('drops the partitions whose newest file is older than the expiration time', () => {
    let now = NOON_DEC_6 - 5 * HOUR;
    const t = Table.create(freshDir(), TableSchema.fromSpec(COMPACT_DAYS(), now), { clock: () => now });
    const w = t.newWriter();
    w.writeRecord({ dt: 'a', k: 1, v: 'old' });
    w.writeRecord({ dt: 'b', k: 1, v: 'old' });
    w.commit();
    now += 4 * HOUR;
    w.writeRecord({ dt: 'b', k: 2, v: 'new' }); // b's newest file is an hour old at noon
    w.writeRecord({ dt: 'c', k: 1, v: 'new' });
    w.commit();
    w.close();
    now = NOON_DEC_6;
    // Values 'a', 'b', 'c' give no time: values-time would keep them all.
    expect(t.expirePartitions({ expirationTime: '2 h', dryRun: true }).partitions).toEqual([]);
    const r = t.expirePartitions({ expirationTime: '2 h', strategy: 'update-time' });
    expect(r.partitions).toEqual(['dt=a']);
    expect(r.skipped).toEqual([]);
    expect(t.expirePartitions({ expirationTime: '30 min', strategy: 'update-time' }).partitions).toEqual(['dt=b', 'dt=c']);
    expect(t.scanRows()).toEqual([]);
  });

  it('works on an append table', () => {
    const now = NOON_DEC_6;
    const spec: SchemaSpec = { fields: [{ name: 'dt', type: 'STRING' }, { name: 'v', type: 'INT' }], partitionKeys: ['dt'], options: { bucket: '-1' } };
    const t = Table.create(freshDir(), TableSchema.fromSpec(spec, now), { clock: () => now });
    const w = t.newWriter();
    for (const dt of ['2026-12-01', '2026-12-06']) w.writeRecord({ dt, v: 1 });
    w.commit();
    // An append writer keeps state of its own that a drop would leave stale: refused there.
    expect(refusal(() => w.expirePartitionsNow({ expirationTime: '1 d' })).kind).toBe('NotSupported');
    w.close();
    expect(t.expirePartitions({ expirationTime: '1 d' }).partitions).toEqual(['dt=2026-12-01']);
    expect(t.scanRows()).toEqual([['2026-12-06', 1]]);
  });
});

describe('TableWriter.expirePartitionsNow', () => {
  it('drops through an open writer, which goes on writing; refused while it holds uncommitted rows', () => {
    let now = NOON_DEC_6;
    const t = filled({}, () => now);
    const w = t.newWriter();
    w.writeRecord({ dt: '20261206', k: 5, v: 'pending' });
    expect(refusal(() => w.expirePartitionsNow({ expirationTime: '2 d', timestampFormatter: 'yyyyMMdd' })).message).toMatch(/uncommitted rows; commit them/);
    expect(w.expirePartitionsNow({ expirationTime: '2 d', timestampFormatter: 'yyyyMMdd', dryRun: true }).partitions).toHaveLength(4);
    w.commit();
    now += MIN;
    expect(w.expirePartitionsNow({ expirationTime: '2 d', timestampFormatter: 'yyyyMMdd' }).partitions).toHaveLength(4);
    w.writeRecord({ dt: '20261205', k: 9, v: 'after' });
    w.commit();
    w.close();
    expect(t.scanRows()).toEqual([
      ['20261205', 1, 'a4'],
      ['20261205', 9, 'after'],
      ['20261206', 1, 'a5'],
      ['20261206', 5, 'pending'],
    ]);
  });
});

describe('refusals', () => {
  it('each bad argument is named, checked as its option is; the table is left as it was', () => {
    const t = filled();
    const latest = t.latestSnapshot()!.id;
    const cases: [Parameters<Table['expirePartitions']>[0], string][] = [
      [{ expirationTime: 'soon' }, "argument 'expirationTime': expected a duration such as '2 d'"],
      [{ expirationTime: '' }, "argument 'expirationTime': expected a non-empty string"],
      [{ expirationTime: '1 d', strategy: 'VALUES-TIME' }, "argument 'strategy': expected 'values-time' or 'update-time', got 'VALUES-TIME'"],
      [{ expirationTime: '1 d', maxExpires: -1 }, "argument 'maxExpires': expected an integer in 0..2147483647, got -1"],
      [{ expirationTime: '1 d', maxExpires: 1.5 }, "argument 'maxExpires': expected an integer"],
      [{ expirationTime: '1 d', timestampPattern: ' ' }, "argument 'timestampPattern': expected a non-empty string"],
      [{}, "table " + t.name + " has no option 'partition.expiration-time' and no argument 'expirationTime' was given"],
    ];
    for (const [args, message] of cases) {
      const e = refusal(() => t.expirePartitions(args));
      expect(e.kind, message).toBe('InvalidArgument');
      expect(e.message).toContain(message);
    }
    const f = refusal(() => t.expirePartitions({ expirationTime: '1 d', timestampFormatter: 'dd MMM yyyy' }));
    expect([f.kind, f.message]).toEqual(['NotSupported', expect.stringContaining("argument 'timestampFormatter': 'dd MMM yyyy' is not parsed here")]);
    expect(t.latestSnapshot()!.id).toBe(latest);
  });

  it('a dryRun that is not a boolean is refused, not taken for a real drop', () => {
    const t = filled();
    const latest = t.latestSnapshot()!.id;
    for (const dryRun of ['true', 1, 'yes']) {
      const e = refusal(() => t.expirePartitions({ expirationTime: '1 d', timestampFormatter: 'yyyyMMdd', dryRun: dryRun as unknown as boolean }));
      expect([e.kind, e.message]).toEqual(['InvalidArgument', `argument 'dryRun': expected true or false, got ${JSON.stringify(dryRun)}`]);
    }
    expect(t.latestSnapshot()!.id).toBe(latest);
    expect(days(t.scanRows())).toEqual(DAYS);
  });

  it("a formatter of the table's own that values-time cannot use is named as the option", () => {
    // Allowed on a table that does not expire; an expiration on demand would use it.
    const t = filled({ 'partition.timestamp-formatter': 'dd MMM yyyy' });
    const e = refusal(() => t.expirePartitions({ expirationTime: '1 d' }));
    expect([e.kind, e.message]).toEqual(['NotSupported', expect.stringContaining("option 'partition.timestamp-formatter': 'dd MMM yyyy' is not parsed here")]);
    expect(t.expirePartitions({ expirationTime: '1 d', strategy: 'update-time' }).partitions).toEqual([]); // unused there
  });

  it('an unpartitioned table is a clear error', () => {
    const spec: SchemaSpec = { fields: [{ name: 'k', type: 'INT NOT NULL' }], primaryKeys: ['k'], options: { bucket: '1' } };
    const t = Table.create(freshDir(), TableSchema.fromSpec(spec, NOON_DEC_6));
    const e = refusal(() => t.expirePartitions({ expirationTime: '1 d' }));
    expect([e.kind, e.message]).toEqual(['InvalidArgument', `table ${t.name} has no partition keys: there are no partitions to expire`]);
  });
});

describe('tilstand table expire-partitions', () => {
  const cli = (args: string[]) => runCli(runTableCli, args);

  function warehouse(): { wh: string; table: Table } {
    const wh = join(freshDir(), 'wh');
    const spec = { ...COMPACT_DAYS(), options: { bucket: '1' } };
    const catalog = new Catalog(wh);
    catalog.createDatabase('d');
    const table = catalog.createTable(parseIdentifier('d.t'), spec);
    const w = table.newWriter();
    // Values-time against the real clock: far past and far future.
    for (const dt of ['20200101', '20200102', '20990101']) w.writeRecord({ dt, k: 1, v: dt });
    w.commit();
    w.close();
    return { wh, table };
  }

  it('prints what it dropped and the snapshot, or with --dry-run what it would; --json', async () => {
    const { wh, table } = warehouse();
    const base = ['expire-partitions', 'd.t', '--warehouse', wh, '--expiration-time', '1 d', '--timestamp-formatter', 'yyyyMMdd'];
    const dry = await cli([...base, '--dry-run']);
    expect([dry.code, dry.err]).toEqual([0, '']);
    expect(dry.out).toBe('would drop dt=20200101\nwould drop dt=20200102\ndry run: 2 partitions would be dropped, nothing written\n');
    expect(table.snapshots.listIds()).toEqual([1]);
    const one = await cli([...base, '--max-expires', '1', '--json']);
    expect([one.code, one.err]).toEqual([0, '']);
    expect(JSON.parse(one.out)).toEqual({ dryRun: false, partitions: ['dt=20200101'], snapshots: [2], skipped: [] });
    const rest = await cli(base);
    expect(rest.out).toBe('dropped dt=20200102\n1 partition dropped in snapshot 3\n');
    expect((await cli(base)).out).toBe('no expired partitions\n');
    expect(days(table.scanRows())).toEqual(['20990101']);
    expect(days(table.scanRows({ snapshotId: 1 }))).toEqual(['20200101', '20200102', '20990101']);
  });

  it('bad flags name themselves (exit 2); no expiration time is a usage error that says so; another writer gives exit 3', async () => {
    const { wh, table } = warehouse();
    const base = ['expire-partitions', 'd.t', '--warehouse', wh];
    const cases: [string[], string][] = [
      [[], "no option '--expiration-time' was given"],
      [['--expiration-time', 'soon'], "option '--expiration-time': expected a duration"],
      [['--expiration-time', '1 d', '--strategy', 'newest'], "option '--strategy': expected 'values-time' or 'update-time', got 'newest'"],
      [['--expiration-time', '1 d', '--max-expires', 'ten'], "option '--max-expires': expected an integer, got 'ten'"],
      [['--expiration-time', '1 d', '--max-expires', '-3'], "option '--max-expires': expected an integer in 0..2147483647, got -3"],
      [['--expiration-time', '1 d', '--timestamp-formatter', 'EEE yyyy'], "option '--timestamp-formatter': 'EEE yyyy' is not parsed here"],
    ];
    for (const [flags, message] of cases) {
      const r = await cli([...base, ...flags]);
      expect([r.code, r.out], message).toEqual([2, '']);
      expect(r.err).toContain(message);
    }
    const held = table.newWriter();
    try {
      const r = await cli([...base, '--expiration-time', '1 d', '--timestamp-formatter', 'yyyyMMdd']);
      expect(r.code).toBe(3);
    } finally {
      held.close();
    }
    expect(table.snapshots.listIds()).toEqual([1]);
  });

  it('an unpartitioned table: exit 2 naming it', async () => {
    const wh = join(freshDir(), 'wh');
    const catalog = new Catalog(wh);
    catalog.createDatabase('d');
    catalog.createTable(parseIdentifier('d.flat'), { fields: [{ name: 'k', type: 'INT NOT NULL' }], primaryKeys: ['k'], options: { bucket: '1' } });
    const r = await cli(['expire-partitions', 'd.flat', '--warehouse', wh, '--expiration-time', '1 d']);
    expect(r.code).toBe(2);
    expect(r.err).toBe('tilstand: table d.flat has no partition keys: there are no partitions to expire\n');
  });
});
