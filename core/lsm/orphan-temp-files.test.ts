// Orphan removal deletes the temporary file a kill inside an atomic create or replace leaves
// (`.<name>.<uuid>.tmp`: file-io.ts tempNameFor) in snapshot/, tag/, schema/ and consumer/, older
// than its threshold, and nothing else there (DESIGN.md, "Tags, expiration and cleanup").

import { existsSync, mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Catalog, parseIdentifier } from './catalog.ts';
import { runTableCli } from './cli/table-cli.ts';
import { tempNameFor } from './file-io.ts';
import { TableSchema, type SchemaSpec } from './schema.ts';
import { Table } from './table.ts';
import { runCli } from './testing/cli.ts';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function freshDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'lsm-orphan-temp-'));
  dirs.push(d);
  return d;
}

const SPEC: SchemaSpec = {
  fields: [{ name: 'k', type: 'INT NOT NULL' }, { name: 'v', type: 'STRING' }],
  primaryKeys: ['k'],
  options: { bucket: '1', 'snapshot.num-retained.min': '1', 'snapshot.time-retained': '1 ms' },
};

const HOUR = 3_600_000;

/** Writes `path` and sets its modification time `ageMs` in the past. */
function plant(path: string, ageMs: number): string {
  writeFileSync(path, '{"partial": ');
  const t = (Date.now() - ageMs) / 1000;
  utimesSync(path, t, t);
  return path;
}

function commitOne(t: Table, k: number): void {
  const w = t.newWriter();
  w.writeRecord({ k, v: `v${k}` });
  w.commit();
  w.close();
}

describe('orphan removal and the temporary files of atomic writes', () => {
  it('deletes an old temporary file of a snapshot, hint, tag, schema or consumer; keeps young ones, look-alikes and the real files', () => {
    const t = Table.create(freshDir(), TableSchema.fromSpec(SPEC, Date.now()));
    commitOne(t, 1);
    t.createTag('keep');
    commitOne(t, 2);
    const w = t.newWriter();
    const p = t.paths;
    const consumerDir = join(p.root, 'consumer');
    // What a kill between the temp file's write and its link or rename leaves, a day old.
    const old = [
      plant(tempNameFor(p.snapshotFile(3)), 24 * HOUR),
      plant(tempNameFor(p.latestHint), 24 * HOUR),
      plant(tempNameFor(p.earliestHint), 24 * HOUR),
      plant(tempNameFor(p.tagFile('nightly')), 24 * HOUR),
      plant(tempNameFor(p.schemaFile(1)), 24 * HOUR),
    ];
    mkdirSync(consumerDir, { recursive: true });
    old.push(plant(tempNameFor(join(consumerDir, 'consumer-agent')), 24 * HOUR));
    // Young: a write that may be under way (another process's tag create).
    const young = plant(tempNameFor(p.tagFile('now')), 60_000);
    // Old, but not exactly a temporary name of what the directory holds.
    const uuid = basename(tempNameFor('x')).slice(3, -4);
    const alike = [
      plant(join(p.snapshotDir, '.snapshot-2.tmp'), 24 * HOUR),
      plant(join(p.snapshotDir, `.snapshot-2.${uuid}.tmp.bak`), 24 * HOUR),
      plant(join(p.snapshotDir, `.notes.${uuid}.tmp`), 24 * HOUR),
      plant(join(p.tagDir, `.tag-x.${uuid.toUpperCase()}.tmp`), 24 * HOUR),
      plant(join(p.schemaDir, `.schema-x.${uuid}.tmp`), 24 * HOUR),
      plant(join(p.root, `.snapshot-2.${uuid}.tmp`), 24 * HOUR), // not in a directory the store writes them to
    ];
    // The real files, made a day old too: never touched.
    const real = [p.snapshotFile(t.latestSnapshot()!.id), p.latestHint, p.earliestHint, p.tagFile('keep'), p.schemaFile(0)];
    for (const f of real) {
      const s = (Date.now() - 24 * HOUR) / 1000;
      utimesSync(f, s, s);
    }

    const removed = w.removeOrphanFiles(HOUR);
    w.close();
    expect(removed.filter((f) => basename(f).endsWith('.tmp')).sort()).toEqual([...old].sort());
    for (const f of old) expect(existsSync(f), f).toBe(false);
    for (const f of [young, ...alike, ...real]) expect(existsSync(f), f).toBe(true);
    expect(t.scanRows()).toEqual([[1, 'v1'], [2, 'v2']]);
    expect(t.scanRows({ tag: 'keep' })).toEqual([[1, 'v1']]);
  });

  it("expiration's listing sweep (a Table's first that expires something, as after a site's start) deletes those an hour old, and only those", async () => {
    const t = Table.create(freshDir(), TableSchema.fromSpec(SPEC, Date.now()));
    commitOne(t, 1);
    const p = t.paths;
    mkdirSync(p.tagDir, { recursive: true });
    const uuid = basename(tempNameFor('x')).slice(3, -4);
    const old = [plant(tempNameFor(p.snapshotFile(2)), 2 * HOUR), plant(tempNameFor(p.tagFile('nightly')), 2 * HOUR)];
    const young = [plant(tempNameFor(p.snapshotFile(3)), 50 * 60_000), plant(tempNameFor(p.tagFile('now')), 0)];
    const alike = plant(join(p.snapshotDir, `.notes.${uuid}.tmp`), 2 * HOUR);
    // A new Table object: its first expiration that expires a snapshot lists the directories
    // (snapshot 1 expires once snapshot 2 is older than 'snapshot.time-retained', 1 ms).
    const again = Table.open(p.root);
    commitOne(again, 2);
    await new Promise((r) => setTimeout(r, 20));
    commitOne(again, 3);
    expect(again.snapshots.earliestId()).toBeGreaterThan(1);
    for (const f of old) expect(existsSync(f), f).toBe(false);
    for (const f of [...young, alike]) expect(existsSync(f), f).toBe(true);
    expect(again.scanRows()).toEqual([[1, 'v1'], [2, 'v2'], [3, 'v3']]);
  });

  it('`table expire --orphans-older-than` counts them', async () => {
    const wh = join(freshDir(), 'wh');
    const catalog = new Catalog(wh);
    catalog.createDatabase('d');
    const t = catalog.createTable(parseIdentifier('d.t'), SPEC);
    commitOne(t, 1);
    const tmp = plant(tempNameFor(t.paths.snapshotFile(2)), 3 * HOUR);
    const r = await runCli(runTableCli, ['expire', 'd.t', '--warehouse', wh, '--orphans-older-than', '2h']);
    expect([r.code, r.err]).toEqual([0, '']);
    expect(JSON.parse(r.out)).toMatchObject({ orphanFilesRemoved: 1 });
    expect(existsSync(tmp)).toBe(false);
    expect(existsSync(t.paths.snapshotFile(1))).toBe(true);
  });
});
