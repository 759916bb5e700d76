// A table of the site's own (config.json `tables` entry with `columns`; core/ingest site-tables.ts)
// travels to HQ as the seed tables do: its snapshot, its hourly tags and every schema file — a
// second one (`schema-1`) once a column was added. `tilstand hq …` reads it there (earlier rows
// read the added column as null), and `tilstand restore` brings it back. HQ does not hold
// config.json, where the table is defined, so a restored site (`tilstand init` after the restore)
// starts without the definition: the table is on disk but nothing writes it until the entry is put
// back. The restore's output names such tables and says so, and drafts their entries from HQ's
// schemas into `<data>/restored-tables.json`: pasted into config.json with a binding, the draft
// defines the table as it is on disk (the person sets its budget and decision).
//
// The site is made by `tilstand init` and checked by `tilstand config check` / `status` in child
// processes (core/site, which this folder may not import); yard_doors is made with core/lsm as the
// Ingestor makes it from the definition, and `config check` confirms the table on disk fits it.

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

const dir = tempDir('site-tables');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The config.json entry of core/site/site-tables.test.ts (budget and definition). */
const DOORS = {
  table: 'yard_doors',
  budgetMs: 30_000,
  decision: 'the gate crew sees which dock door is free',
  confirmedBy: 'test',
  comment: 'Dock doors as the yard system reports them; one row per door.',
  columns: [
    { name: 'door_id', type: 'STRING NOT NULL' },
    { name: 'state', type: 'STRING', description: 'free | occupied | down' },
    { name: 'yard_seq', type: 'BIGINT', description: 'source.seq of yard/doors' },
  ],
  primaryKeys: ['door_id'],
  options: { 'merge-engine': 'deduplicate', 'sequence.field': 'yard_seq' },
};
/** The contract yard_doors' binding reads (core/site/site-tables.test.ts). */
const CONTRACT = {
  name: 'yard.doors',
  version: 1,
  compatibility: 'FULL_TRANSITIVE',
  fields: [
    { name: 'door_id', type: 'STRING NOT NULL' },
    { name: 'state', type: 'STRING NOT NULL', symbols: ['free', 'occupied', 'down'] },
    { name: 'trailer_id', type: 'STRING', default: null },
  ],
};
const BINDING = { name: 'yard.doors→yard_doors', topic: 'tilstand/+/events/yard/doors', contract: 'yard.doors', table: 'yard_doors', columns: { door_id: 'after.door_id', state: 'after.state', yard_seq: 'source.seq' } };
/** The same entry after a column was added at the end. */
const WIDER = { ...DOORS, columns: [...DOORS.columns, { name: 'trailer_id', type: 'STRING NOT NULL' }] };

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

/** config.json of `data` with yard_doors' entry set to `entry` (or taken out: undefined). */
function setDoorsEntry(data: string, entry: Record<string, unknown> | undefined): void {
  const path = join(data, 'config.json');
  const c = JSON.parse(readFileSync(path, 'utf8')) as { tables: { table: string }[] };
  c.tables = [...c.tables.filter((t) => t.table !== 'yard_doors'), ...(entry ? [entry as { table: string }] : [])];
  writeFileSync(path, `${JSON.stringify(c, null, 2)}\n`);
}

/** config.json of `data` with `bindings` as its bindings. */
function setBindings(data: string, bindings: unknown[]): void {
  const path = join(data, 'config.json');
  writeFileSync(path, `${JSON.stringify({ ...(JSON.parse(readFileSync(path, 'utf8')) as object), bindings }, null, 2)}\n`);
}

/** yard_doors as the Ingestor makes it from DOORS (core/ingest site-tables.ts definitionSchema). */
function makeDoors(data: string): Table {
  return new Catalog(join(data, 'warehouse')).createTable(
    { database: 'site_north', table: 'yard_doors' },
    { fields: DOORS.columns.map((c) => ({ ...c })), primaryKeys: [...DOORS.primaryKeys], options: { ...DOORS.options }, comment: DOORS.comment },
  );
}

function writeDoors(t: Table, rows: unknown[][], hwm: number): void {
  const w = t.newWriter();
  try {
    for (const r of rows) w.write(r, RowKind.INSERT);
    w.commit({ 'tilstand.hwm.yard/doors': String(hwm) });
  } finally {
    w.close();
  }
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

const hqLines = async (args: string[]) => {
  const r = await runCli((a, io) => runHq(a, io), args);
  expect(r.code, r.err).toBe(0);
  return r.out.split('\n').filter((l) => l !== '');
};
const scan = async (hq: string, extra: string[] = []) => (await hqLines(['scan', '--hq', hq, '--site', 'north', '--table', 'yard_doors', ...extra])).map((l) => JSON.parse(l) as Record<string, unknown>);

describe("a table of the site's own at HQ", () => {
  it('travels with its hourly tags and both schema files, hq scan reads it (the added column null on earlier rows), and restore brings it back', { timeout: 180_000 }, async () => {
    const data = join(dir, 'site');
    const hq = join(dir, 'hq');
    const init = await tilstand(['init', '--data', data, '--site', 'north']);
    expect(init.code, init.err).toBe(0);
    // Its binding's contract, registered on the site, travels to HQ and comes back with the restore.
    writeFileSync(join(dir, 'yard.doors.v1.json'), JSON.stringify(CONTRACT));
    const added = await tilstand(['contracts', 'add', '--file', join(dir, 'yard.doors.v1.json'), '--data', data]);
    expect(added.code, added.out + added.err).toBe(0);
    setDoorsEntry(data, DOORS);
    const doors = makeDoors(data);
    writeDoors(doors, [['D-01', 'free', 1n], ['D-02', 'occupied', 2n]], 2);
    // The table on disk is the one the definition makes (start would take it as it is).
    const check = await tilstand(['config', 'check', '--data', data]);
    expect(check.code, check.out + check.err).toBe(0);

    const h14 = Date.UTC(2026, 11, 5, 14, 0, 30);
    await ship(data, hq, h14);
    const atHq = join(hq, sitePrefix('north'), 'yard_doors');
    expect(existsSync(join(atHq, 'schema', 'schema-0'))).toBe(true);
    expect(existsSync(join(atHq, 'tag', 'tag-hourly-2026120514'))).toBe(true);
    expect(await hqLines(['tables', '--hq', hq, '--site', 'north'])).toEqual(expect.arrayContaining([expect.stringMatching(/^yard_doors\b/)]));
    expect(await scan(hq)).toEqual([
      { door_id: 'D-01', state: 'free', yard_seq: 1 },
      { door_id: 'D-02', state: 'occupied', yard_seq: 2 },
    ]);

    // A column added at the end of the definition, as the Ingestor adds it at the next start
    // (evolveToDefinition: nullable, after the last column), and a row that has it.
    setDoorsEntry(data, WIDER);
    doors.alter([{ kind: 'addColumn', name: 'trailer_id', type: 'STRING', position: { after: 'yard_seq' } }]);
    writeDoors(doors, [['D-03', 'occupied', 4n, 'TR-9'], ['D-01', 'occupied', 3n, null]], 4);
    const wider = await tilstand(['config', 'check', '--data', data]);
    expect(wider.code, wider.out + wider.err).toBe(0);
    await ship(data, hq, h14 + 3_600_000);
    expect(existsSync(join(atHq, 'schema', 'schema-1'))).toBe(true);
    expect(existsSync(join(atHq, 'tag', 'tag-hourly-2026120515'))).toBe(true);
    const now = [
      { door_id: 'D-01', state: 'occupied', yard_seq: 3, trailer_id: null },
      { door_id: 'D-02', state: 'occupied', yard_seq: 2, trailer_id: null },
      { door_id: 'D-03', state: 'occupied', yard_seq: 4, trailer_id: 'TR-9' },
    ];
    expect(await scan(hq)).toEqual(now);
    expect(await scan(hq, ['--tag', 'hourly-2026120515'])).toEqual(now);
    // The tag from before the column reads in the columns of then (as Paimon's time travel does);
    // hq diff across the two shows today's.
    expect(await scan(hq, ['--tag', 'hourly-2026120514'])).toEqual([
      { door_id: 'D-01', state: 'free', yard_seq: 1 },
      { door_id: 'D-02', state: 'occupied', yard_seq: 2 },
    ]);
    const diff = await hqLines(['diff', '--hq', hq, '--site', 'north', '--table', 'yard_doors', '--from', 'hourly-2026120514', '--to', 'hourly-2026120515']);
    expect(diff.map((l) => JSON.parse(l) as Record<string, unknown>)).toEqual([
      { _kind: '-U', door_id: 'D-01', state: 'free', yard_seq: 1, trailer_id: null },
      { _kind: '+U', door_id: 'D-01', state: 'occupied', yard_seq: 3, trailer_id: null },
      { _kind: '+I', door_id: 'D-03', state: 'occupied', yard_seq: 4, trailer_id: 'TR-9' },
    ]);

    // Restore onto a replacement PC: the table and its tags come back, and its own stream is to be resent.
    const fresh = join(dir, 'fresh');
    const restored = await runCli((a, io) => runRestore(a, io), ['--data', fresh, '--hq', hq, '--site', 'north']);
    expect(restored.code, restored.err).toBe(0);
    expect(restored.out).toMatch(/yard_doors@\d+/);
    expect(restored.out).toContain('resync yard/doors after seq 4');
    const back = new Catalog(join(fresh, 'warehouse')).getTable({ database: 'site_north', table: 'yard_doors' });
    expect(back.schema.id).toBe(1);
    expect(back.listTags().map((t) => t.name)).toEqual(['hourly-2026120514', 'hourly-2026120515']);
    // HQ holds no config.json: the restored site starts with init's, which does not define the
    // table. The restore says so, naming the table and what to put back.
    expect(restored.out).toContain("yard_doors is a table of the site's own: HQ does not hold config.json, which defines it");
    expect(JSON.parse((await runCli((a, io) => runRestore(a, io), ['--data', join(dir, 'fresh-json'), '--hq', hq, '--site', 'north', '--json'])).out).ownTables).toEqual(['yard_doors']);

    const again = await tilstand(['init', '--data', fresh, '--site', 'north']);
    expect(again.code, again.err).toBe(0);
    type Status = { tables: { table: string; rows: number | null }[] };
    const without = JSON.parse((await tilstand(['status', '--data', fresh, '--json'])).out) as Status;
    expect(without.tables.map((t) => t.table)).not.toContain('yard_doors');
    // The entry put back (the definition with the added column): the restored table fits it.
    setDoorsEntry(fresh, WIDER);
    const fits = await tilstand(['config', 'check', '--data', fresh]);
    expect(fits.code, fits.out + fits.err).toBe(0);
    const withDoors = JSON.parse((await tilstand(['status', '--data', fresh, '--json'])).out) as Status;
    expect(withDoors.tables.find((t) => t.table === 'yard_doors')).toMatchObject({ rows: 3 });

    // When the replaced PC's config.json is lost with it: the restore drafted the entry from HQ's
    // latest schema — the columns as the table has them (the key NOT NULL, the added column
    // nullable), the key, the options the site set (not those the table store fills in), the
    // comment — with a budget and decision that say they are to be set.
    const draftPath = join(fresh, 'restored-tables.json');
    expect(restored.out).toContain(`Its entry, drafted from HQ's schema, is in ${draftPath}: after \`tilstand init\`, add it to ${join(fresh, 'config.json')} \`tables\`, with its binding`);
    const drafts = JSON.parse(readFileSync(draftPath, 'utf8')) as Record<string, unknown>[];
    expect(drafts).toEqual([
      {
        table: 'yard_doors',
        budgetMs: 60_000,
        decision: "restored from HQ's schema: say what this table's freshness serves",
        confirmedBy: 'nobody yet',
        comment: DOORS.comment,
        columns: [...DOORS.columns, { name: 'trailer_id', type: 'STRING' }],
        primaryKeys: ['door_id'],
        options: DOORS.options,
      },
    ]);
    // Pasted into the restored site's config.json with its binding: config check takes it and
    // finds the table on disk as the draft defines it (nothing to add, nothing refused).
    setDoorsEntry(fresh, drafts[0]);
    setBindings(fresh, [BINDING]);
    const drafted = await tilstand(['config', 'check', '--data', fresh]);
    expect(drafted.code, drafted.out + drafted.err).toBe(0);
    expect(drafted.out).toContain("table yard_doors (the site's own): on disk as defined\n");

    // A site with none of its own tables gets no draft file; a --force restore of such a site over
    // this one takes away the draft it no longer fits.
    const plain = join(dir, 'plain');
    const plainHq = join(dir, 'plain-hq');
    const plainCatalog = new Catalog(join(plain, 'warehouse'));
    plainCatalog.createDatabase('site_north');
    const queue = plainCatalog.createTable({ database: 'site_north', table: 'work_queue' }, { fields: [{ name: 'job_id', type: 'STRING NOT NULL' }], primaryKeys: ['job_id'] });
    const w = queue.newWriter();
    try {
      w.write(['J-1'], RowKind.INSERT);
      w.commit({});
    } finally {
      w.close();
    }
    await ship(plain, plainHq, h14);
    const none = await runCli((a, io) => runRestore(a, io), ['--data', join(dir, 'plain-restored'), '--hq', plainHq, '--site', 'north']);
    expect(none.code, none.err).toBe(0);
    expect(none.out).not.toContain('restored-tables.json');
    expect(existsSync(join(dir, 'plain-restored', 'restored-tables.json'))).toBe(false);
    const over = await runCli((a, io) => runRestore(a, io), ['--data', fresh, '--hq', plainHq, '--site', 'north', '--force']);
    expect(over.code, over.err).toBe(0);
    expect(existsSync(draftPath)).toBe(false);
  });
});
