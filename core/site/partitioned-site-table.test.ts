// A table of the site's own partitioned by day (config.json `tables` entry with `partitionKeys`;
// core/ingest site-tables.ts) whose old partitions expire (`partition.expiration-time`, core/lsm
// partition-expire.ts). Config check takes a good entry and refuses each bad one naming the config
// key; a table on disk with other partition keys is refused by config check and start; a running
// site drops the partitions older than the expiration at a commit once the check interval has
// passed, and a partition whose value gives no time is told in the site's log, not as a process
// warning. The expiration on a simulated clock, with a tag from before the drop, is in
// core/replay/partitioned-site-table.test.ts.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import mqtt from 'mqtt';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SEED_BINDINGS } from '../ingest/seed-bindings.ts';
import { dayOf, DOOR_EVENTS, DOOR_EVENTS_BINDING, DOOR_EVENTS_CONTRACT, doorEventPayload } from '../ingest/test-support/door-events.ts';
import { Catalog, valueToJson } from '../lsm/index.ts';
import { ConfigError, parseConfig, readConfig, writeConfig, type SiteConfig } from './config.ts';
import { initDataDir } from './init.ts';
import { Site } from './site.ts';
import { runMain as run } from './cli/test-support.ts';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'tilstand-partitioned-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const withEntry = (c: SiteConfig, entry: Record<string, unknown>): SiteConfig =>
  ({ ...c, tables: [...c.tables.filter((t) => t.table !== 'door_events'), entry], bindings: [...SEED_BINDINGS, DOOR_EVENTS_BINDING] }) as unknown as SiteConfig;

/** The refusal of a config with `entry` as its only `tables` entry, or 'accepted'. */
function refusal(entry: Record<string, unknown>): string {
  try {
    parseConfig({ format: 1, site: 'north', tables: [entry] });
  } catch (e) {
    expect(e).toBeInstanceOf(ConfigError);
    return (e as Error).message;
  }
  return 'accepted';
}

function rowsOf(data: string): Record<string, unknown>[] {
  const t = new Catalog(join(data, 'warehouse')).getTable({ database: 'site_north', table: 'door_events' });
  return t.scanRows({}).map((row) => Object.fromEntries(t.schema.fields.map((f, i) => [f.name, valueToJson(f.type, row[i])])));
}

describe("a partitioned table of the site's own", () => {
  it('is checked by config check: partitionKeys columns of the key, once, of a partition type; the partition options by the table store', () => {
    expect(refusal(DOOR_EVENTS)).toBe('accepted');
    // What the config keeps: the entry as given, partitionKeys included (writeConfig writes it back).
    expect(parseConfig({ format: 1, site: 'north', tables: [DOOR_EVENTS] }).tables[0]).toMatchObject({ partitionKeys: ['day'], primaryKeys: ['day', 'door_id'] });
    const bin = { ...DOOR_EVENTS, columns: [...DOOR_EVENTS.columns, { name: 'raw', type: 'BYTES NOT NULL' }], primaryKeys: ['day', 'door_id', 'raw'] };
    const arr = { ...DOOR_EVENTS, columns: [...DOOR_EVENTS.columns, { name: 'tags', type: 'ARRAY<STRING>' }] };
    expect(refusal({ ...DOOR_EVENTS, partitionKeys: 'day' })).toBe('config tables[0].partitionKeys: expected an array of column names that are in primaryKeys (e.g. ["day"]), got "day"');
    expect(refusal({ ...DOOR_EVENTS, partitionKeys: [3] })).toBe('config tables[0].partitionKeys[0]: expected a column name, got number 3');
    expect(refusal({ ...DOOR_EVENTS, partitionKeys: ['date'] })).toBe("config tables[0].partitionKeys[0]: 'date' is not one of the columns (day, door_id, state, yard_seq)");
    expect(refusal({ ...DOOR_EVENTS, partitionKeys: ['day', 'day'] })).toBe("config tables[0].partitionKeys[1]: 'day' is given twice");
    expect(refusal({ ...DOOR_EVENTS, partitionKeys: ['state'] })).toMatch(/^config tables\[0\]\.partitionKeys\[0\]: 'state' is not in primaryKeys \(day, door_id\): Paimon keeps a key's row in one partition only when the primary key contains every partition key .*add 'state' to primaryKeys, which also makes it NOT NULL$/);
    expect(refusal({ ...DOOR_EVENTS, partitionKeys: ['day', 'door_id'] })).toMatch(/^config tables\[0\]\.partitionKeys: every primary-key column \(day, door_id\) is a partition key/);
    expect(refusal({ ...bin, partitionKeys: ['raw'] })).toMatch(/^config tables\[0\]\.partitionKeys\[0\]: 'raw' is BYTES NOT NULL: binary partition columns are not written here/);
    expect(refusal({ ...arr, partitionKeys: ['tags'] })).toMatch(/^config tables\[0\]\.partitionKeys\[0\]: 'tags' is ARRAY<STRING>: expected a column of a type a partition can have \(not ARRAY or MAP\)/);
    // Paimon's own option for it is not taken: the key is partitionKeys.
    expect(refusal({ ...DOOR_EVENTS, options: { ...DOOR_EVENTS.options, partition: 'day' } })).toBe("config tables[0].options.partition: not an option here: the keys are 'primaryKeys' and 'partitionKeys' of the entry");
    // The partition options go through `options`, checked by the table store naming the option.
    expect(refusal({ ...DOOR_EVENTS, options: { ...DOOR_EVENTS.options, 'partition.expiration-time': 'a month' } })).toMatch(/^config tables\[0\]\.options: .*'partition\.expiration-time'/);
    expect(refusal({ ...DOOR_EVENTS, options: { ...DOOR_EVENTS.options, 'partition.expiration-strategy': 'oldest' } })).toBe(
      "config tables[0].options: option 'partition.expiration-strategy': expected 'values-time' or 'update-time', got 'oldest'",
    );
    expect(refusal({ ...DOOR_EVENTS, options: { ...DOOR_EVENTS.options, 'partition.timestamp-formatter': 'dd MMM yyyy' } })).toMatch(/^config tables\[0\]\.options: .*'partition\.timestamp-formatter'/);
    // Only a table of the site's own takes it.
    expect(refusal({ table: 'stock', budgetMs: 15_000, decision: 'd', confirmedBy: 'c', partitionKeys: ['item'] })).toBe("config tables[0].partitionKeys: only a table of the site's own, with 'columns', takes 'partitionKeys'");
  });

  it('config check names a bad partition option, and refuses a table on disk with other partition keys, as start does', { timeout: 60_000 }, async () => {
    const data = join(dir, 'd');
    await initDataDir({ data, site: 'north' });
    writeFileSync(join(dir, 'contract.json'), JSON.stringify(DOOR_EVENTS_CONTRACT));
    expect((await run(['contracts', 'add', '--file', join(dir, 'contract.json'), '--data', data])).code).toBe(0);
    const base = readConfig(data);
    const at = base.tables.length;
    // The config file as a person writes it (writeConfig would refuse to write a bad one).
    const writeRaw = (entry: Record<string, unknown>) => {
      const c = JSON.parse(readFileSync(join(data, 'config.json'), 'utf8')) as { tables: { table: string }[]; bindings?: unknown };
      c.tables = [...c.tables.filter((t) => t.table !== 'door_events'), entry as { table: string }];
      c.bindings = [...SEED_BINDINGS, DOOR_EVENTS_BINDING];
      writeFileSync(join(data, 'config.json'), JSON.stringify(c, null, 2));
    };
    writeRaw({ ...DOOR_EVENTS, options: { ...DOOR_EVENTS.options, 'partition.expiration-check-interval': 'hourly' } });
    const bad = await run(['config', 'check', '--data', data]);
    expect(bad.code).not.toBe(0);
    expect(bad.err).toContain(`config tables[${at}].options: option 'partition.expiration-check-interval'`);

    writeConfig(data, withEntry(base, DOOR_EVENTS));
    const good = await run(['config', 'check', '--data', data]);
    expect(good.code, good.err).toBe(0);
    expect(good.out).toContain("table door_events (the site's own): made at the next start\n");
    await (await Site.start({ data, mqttPort: 0, httpPort: 0, ui: false, agentTimer: false })).stop();
    const made = new Catalog(join(data, 'warehouse')).getTable({ database: 'site_north', table: 'door_events' });
    expect(made.schema.partitionKeys).toEqual(['day']);
    expect(made.schema.fields.find((f) => f.name === 'day')!.type.nullable).toBe(false);
    expect((await run(['config', 'check', '--data', data])).out).toContain("table door_events (the site's own): on disk as defined\n");

    // Partition keys are fixed at creation (Paimon's `partition` is immutable). Without its
    // partition keys the entry drops its expiry options too (refused on a table without them).
    const { partitionKeys: _p, ...withoutKeys } = DOOR_EVENTS;
    const unpartitioned = { ...withoutKeys, options: { 'merge-engine': 'deduplicate', 'sequence.field': 'yard_seq' } };
    writeConfig(data, withEntry(base, unpartitioned));
    const refused = await run(['config', 'check', '--data', data]);
    expect(refused.code).not.toBe(0);
    expect(refused.err).toContain(`config tables[${at}]: table 'door_events' exists with columns (day STRING NOT NULL, door_id STRING NOT NULL, state STRING, yard_seq BIGINT) and differs from its definition: the partition keys are (day) in the table and none in the definition: partition keys cannot change`);
    let startError: unknown;
    try {
      await (await Site.start({ data, mqttPort: 0, httpPort: 0, ui: false, agentTimer: false })).stop();
    } catch (e) {
      startError = e;
    }
    expect(startError).toBeInstanceOf(ConfigError);
    expect((startError as ConfigError).key).toBe(`tables[${at}]`);
  });

  it("drops the partitions past 'partition.expiration-time' at a commit after the check interval, and tells of one it cannot date in the site's log", { timeout: 90_000 }, async () => {
    const data = join(dir, 'd');
    await initDataDir({ data, site: 'north' });
    const pw = /\): (\S+)$/m.exec((await run(['modules', 'password', '--module', 'yard', '--data', data])).out)![1]!;
    writeFileSync(join(dir, 'contract.json'), JSON.stringify(DOOR_EVENTS_CONTRACT));
    expect((await run(['contracts', 'add', '--file', join(dir, 'contract.json'), '--data', data])).code).toBe(0);
    // A check interval of one second: the first check falls within a second of the writer's open
    // (a random whole number of seconds below the interval: 0), later ones a second apart.
    writeConfig(data, withEntry(readConfig(data), { ...DOOR_EVENTS, options: { ...DOOR_EVENTS.options, 'partition.expiration-check-interval': '1 s' } }));
    const warnings: string[] = [];
    const onWarning = (w: Error) => void warnings.push(w.message);
    process.on('warning', onWarning);
    const lines: string[] = [];
    const site = await Site.start({ data, mqttPort: 0, httpPort: 0, ui: false, agentTimer: false, log: (l: string) => void lines.push(l) });
    const today = dayOf(Date.now());
    const old = dayOf(Date.now(), 60);
    let rows: Record<string, unknown>[] = [];
    try {
      const client = await mqtt.connectAsync(site.mqttUrl, { username: 'yard', password: pw, clientId: 'module-north-yard', protocolVersion: 4, reconnectPeriod: 0, clean: false });
      try {
        let seq = 0;
        const send = (day: string, door: string, state: string) => client.publishAsync('tilstand/north/events/yard/door_events', doorEventPayload(++seq, day, door, state, Date.now()), { qos: 1 });
        await send(old, 'D-01', 'free');
        await send('someday', 'D-01', 'down');
        await send(today, 'D-01', 'occupied');
        // Each round one event more and a commit: the check comes at a commit once its second has passed.
        const deadline = Date.now() + 30_000;
        for (let i = 0; i < 100 && Date.now() < deadline; i++) {
          site.ingestor.commitAll();
          rows = site.ingestor.status().find((t) => t.table === 'door_events')?.snapshotId == null ? [] : rowsOf(data);
          if (rows.length > 0 && !rows.some((r) => r.day === old) && lines.some((l) => l.includes("partition 'day=someday'"))) break;
          await new Promise((r) => setTimeout(r, 300));
          await send(today, `D-${10 + i}`, 'free');
        }
      } finally {
        await client.endAsync();
      }
    } finally {
      await site.stop();
      process.off('warning', onWarning);
    }
    // The old day's partition is gone; today's and the one without a time are kept.
    expect(rows.some((r) => r.day === old)).toBe(false);
    expect(rows).toEqual(expect.arrayContaining([{ day: 'someday', door_id: 'D-01', state: 'down', yard_seq: 2 }, { day: today, door_id: 'D-01', state: 'occupied', yard_seq: 3 }]));
    const told = "ingest: table site_north.door_events: partition 'day=someday' is not expired: no time can be read from its values";
    expect(lines.some((l) => l.includes(told)), lines.join('\n')).toBe(true);
    expect(readFileSync(join(data, 'logs', 'site.log'), 'utf8')).toContain(told);
    expect(warnings.filter((w) => w.includes('someday'))).toEqual([]);
  });
});
