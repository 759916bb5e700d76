// A table of the site's own partitioned by day that keeps 30 days (config.json `tables` entry with
// `partitionKeys` and `partition.expiration-time`; core/ingest site-tables.ts) travels to HQ as
// any table: its partition directories, its hourly tags, and the OVERWRITE snapshot that dropped
// its old partitions. `tilstand hq scan` reads it there: the dropped days are absent at HQ's
// latest and still read at the hourly tag from before the drop.
//
// The site is made by `tilstand init` and checked by `tilstand config check` in a child process
// (core/site, which this folder may not import); door_events is made with core/lsm as the Ingestor
// makes it from the definition, and `config check` confirms the table on disk fits it.

import { spawn } from 'node:child_process';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Catalog, RowKind, type Table } from '../lsm/index.ts';
import { runCli } from '../lsm/testing/cli.ts';
import { SyncEngine } from './engine.ts';
import { runHq } from './cli/hq.ts';
import { runRestore } from './cli/sync.ts';
import { sitePrefix } from './names.ts';
import { DirectoryTarget } from './targets/directory.ts';
import { tempDir } from './test-support/site-fixture.ts';

const dir = tempDir('partitioned');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** core/ingest/test-support/door-events.ts's entry and contract (core/sync may not import core/ingest). */
const ENTRY = {
  table: 'door_events',
  budgetMs: 10_000,
  decision: 'the yard lead reads a month of dock door changes',
  confirmedBy: 'test',
  comment: "Each dock door's last state per day; a partition per day, 30 days kept.",
  columns: [
    { name: 'day', type: 'STRING NOT NULL', description: 'yyyy-MM-dd of the change' },
    { name: 'door_id', type: 'STRING NOT NULL' },
    { name: 'state', type: 'STRING', description: 'free | occupied | down' },
    { name: 'yard_seq', type: 'BIGINT', description: 'source.seq of yard/door_events' },
  ],
  primaryKeys: ['day', 'door_id'],
  partitionKeys: ['day'],
  options: { 'merge-engine': 'deduplicate', 'sequence.field': 'yard_seq', 'partition.expiration-time': '30 d', 'partition.expiration-check-interval': '1 h', 'partition.timestamp-formatter': 'yyyy-MM-dd' },
};
const CONTRACT = {
  name: 'yard.door_events',
  version: 1,
  compatibility: 'FULL_TRANSITIVE',
  fields: [
    { name: 'day', type: 'STRING NOT NULL' },
    { name: 'door_id', type: 'STRING NOT NULL' },
    { name: 'state', type: 'STRING NOT NULL' },
  ],
};

/** `tilstand …` as a person runs it, in a child process (bounded: killed after 60 s). */
async function tilstand(args: string[]): Promise<{ code: number | null; out: string; err: string }> {
  const child = spawn(process.execPath, [resolve('bin/tilstand.mjs'), ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.on('data', (b: Buffer) => (out += b.toString()));
  child.stderr.on('data', (b: Buffer) => (err += b.toString()));
  const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
  const code = await new Promise<number | null>((r) => child.on('close', r));
  clearTimeout(timer);
  return { code, out, err };
}

/** Sends everything to the directory HQ with the engine's hourly tags, its clock at `nowMs`; bounded (50 rounds). */
async function ship(data: string, hq: string, nowMs: number): Promise<void> {
  const e = new SyncEngine({ dataDir: data, site: 'north', target: new DirectoryTarget(hq, { writePrefix: sitePrefix('north') }), retry: { baseMs: 1, maxMs: 5, jitter: 0 }, clock: () => nowMs });
  try {
    await e.enqueueSnapshotSync();
    for (let i = 0; i < 50 && e.status().pendingItems > 0; i++) {
      await e.runOnce();
      if (e.status().pendingItems > 0) await new Promise((r) => setTimeout(r, 10));
    }
    expect(e.status().pendingItems, e.status().lastError ?? '').toBe(0);
  } finally {
    await e.close();
  }
}

const scan = async (hq: string, extra: string[] = []) => {
  const r = await runCli((a, io) => runHq(a, io), ['scan', '--hq', hq, '--site', 'north', '--table', 'door_events', ...extra]);
  expect(r.code, r.err).toBe(0);
  return r.out
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
};
const daysOf = (rows: Record<string, unknown>[]) => [...new Set(rows.map((r) => r.day as string))].sort();

const dayOf = (atMs: number, daysBack: number): string => new Date(atMs - daysBack * 86_400_000).toISOString().slice(0, 10);

describe("a partitioned table of the site's own at HQ", () => {
  it('travels with its partitions and the snapshot that dropped the old ones; hq scan reads the days kept, and the dropped ones at the tag before', { timeout: 180_000 }, async () => {
    const data = join(dir, 'site');
    const hq = join(dir, 'hq');
    const init = await tilstand(['init', '--data', data, '--site', 'north']);
    expect(init.code, init.err).toBe(0);
    writeFileSync(join(dir, 'door_events.v1.json'), JSON.stringify(CONTRACT));
    const added = await tilstand(['contracts', 'add', '--file', join(dir, 'door_events.v1.json'), '--data', data]);
    expect(added.code, added.out + added.err).toBe(0);
    const configPath = join(data, 'config.json');
    const config = JSON.parse(readFileSync(configPath, 'utf8')) as { tables: unknown[]; bindings?: unknown };
    writeFileSync(configPath, `${JSON.stringify({ ...config, tables: [...config.tables, ENTRY] }, null, 2)}\n`);

    // The table as the Ingestor makes it from the entry, on a clock of the site's.
    const h14 = Date.UTC(2026, 11, 5, 14, 0, 30);
    let now = h14;
    const catalog = new Catalog(join(data, 'warehouse'), { clock: () => now });
    const doors: Table = catalog.createTable(
      { database: 'site_north', table: 'door_events' },
      { fields: ENTRY.columns.map((c) => ({ ...c })), primaryKeys: [...ENTRY.primaryKeys], partitionKeys: [...ENTRY.partitionKeys], options: { ...ENTRY.options }, comment: ENTRY.comment },
    );
    const [d60, d31, d29, today] = [dayOf(h14, 60), dayOf(h14, 31), dayOf(h14, 29), dayOf(h14, 0)];
    let w = doors.newWriter({ partitionExpireRandom: () => 0 });
    try {
      w.write([d60, 'D-01', 'free', 1n], RowKind.INSERT);
      w.write([d31, 'D-02', 'occupied', 2n], RowKind.INSERT);
      w.write([d29, 'D-03', 'down', 3n], RowKind.INSERT);
      w.write([today, 'D-01', 'occupied', 4n], RowKind.INSERT);
      w.commit({ 'tilstand.hwm.yard/door_events': '4' });
    } finally {
      w.close();
    }
    // Was: "config tables[5].partitionKeys: unknown key" — a site's table had no partitions.
    const check = await tilstand(['config', 'check', '--data', data]);
    expect(check.code, check.out + check.err).toBe(0);
    // (No binding writes it here: the seed bindings are core/ingest's, which this folder may not import.)
    expect(check.out).toContain("table door_events (the site's own): on disk as defined");

    await ship(data, hq, h14);
    const atHq = join(hq, sitePrefix('north'), 'door_events');
    expect(existsSync(join(atHq, `day=${d60}`))).toBe(true);
    expect(daysOf(await scan(hq))).toEqual([d60, d31, d29, today].sort());

    // An hour later a commit past the check interval drops the days older than 30 days.
    now = h14 + 3_600_000;
    w = doors.newWriter({ partitionExpireRandom: () => 0 });
    try {
      w.write([today, 'D-02', 'free', 5n], RowKind.INSERT);
      now += 3_600_000 + 1_000;
      const r = w.commit({ 'tilstand.hwm.yard/door_events': '5' });
      expect(r.partitions?.dropped).toEqual([`day=${d60}`, `day=${d31}`]);
    } finally {
      w.close();
    }
    await ship(data, hq, now);
    const latest = await scan(hq);
    expect(daysOf(latest)).toEqual([d29, today].sort());
    expect(latest).toEqual(expect.arrayContaining([{ day: today, door_id: 'D-02', state: 'free', yard_seq: 5 }]));
    // The tag from before the drop still reads the dropped days at HQ.
    expect(daysOf(await scan(hq, ['--tag', 'hourly-2026120514']))).toEqual([d60, d31, d29, today].sort());

    // Restored onto a new PC whose config.json was lost: the drafted entry has the partition keys,
    // and pasted into a new site's config.json it finds the restored table as defined.
    const fresh = join(dir, 'restored');
    const restored = await runCli((a, io) => runRestore(a, io), ['--data', fresh, '--hq', hq, '--site', 'north']);
    expect(restored.code, restored.err).toBe(0);
    const drafts = JSON.parse(readFileSync(join(fresh, 'restored-tables.json'), 'utf8')) as Record<string, unknown>[];
    expect(drafts).toEqual([expect.objectContaining({ table: 'door_events', primaryKeys: ['day', 'door_id'], partitionKeys: ['day'], options: ENTRY.options })]);
    const again = await tilstand(['init', '--data', fresh, '--site', 'north']);
    expect(again.code, again.err).toBe(0);
    const added2 = await tilstand(['contracts', 'add', '--file', join(dir, 'door_events.v1.json'), '--data', fresh]);
    expect(added2.code, added2.out + added2.err).toBe(0);
    const freshConfig = JSON.parse(readFileSync(join(fresh, 'config.json'), 'utf8')) as { tables: unknown[] };
    writeFileSync(join(fresh, 'config.json'), `${JSON.stringify({ ...freshConfig, tables: [...freshConfig.tables, drafts[0]] }, null, 2)}\n`);
    const drafted = await tilstand(['config', 'check', '--data', fresh]);
    expect(drafted.code, drafted.out + drafted.err).toBe(0);
    expect(drafted.out).toContain("table door_events (the site's own): on disk as defined");
  });
});
