// `tilstand status`'s row counts (status.ts RowCounter) and the Tables screen's bytes (SiteService
// `bytesOf`) are read again only when a table's latest snapshot changed. Keyed by its id alone,
// they missed a table another process rolled back and committed again up to the same id (a table
// the site does not write, or one whose writers ingest released when it stopped): its rows and
// files are others, and the old snapshot's count and size stood until the next commit. They are
// keyed now, as core/lsm's `bucketIndex`, by the id and the snapshot's delta manifest list.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { Catalog, KeptTables, type Snapshot, type Table } from '../lsm/index.ts';
import { initDataDir } from './init.ts';
import { Site } from './site.ts';
import { RowCounter } from './status.ts';

const dir = mkdtempSync(join(tmpdir(), 'tilstand-counts-after-rollback-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Runs `body` in a child process with `Catalog` imported and `root` the warehouse. */
function inAnotherProcess(root: string, body: string): void {
  const lsm = JSON.stringify(resolve(import.meta.dirname, '../lsm/index.ts'));
  const script = `import { Catalog } from ${lsm};\nconst root = ${JSON.stringify(root)};\n${body}\nconsole.log('done');`;
  const child = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { encoding: 'utf8', timeout: 60_000 });
  expect(child.stdout.trim(), child.stderr).toBe('done');
}

const commit = (t: Table, rows: Record<string, unknown>[]) => {
  const w = t.newWriter();
  for (const r of rows) w.writeRecord(r);
  w.commit();
  w.close();
};

it('RowCounter counts again after another process rolled the table back and committed up to the same snapshot id', () => {
  const root = join(dir, 'rows');
  const catalog = new Catalog(root);
  catalog.createDatabase('db');
  const t = catalog.createTable({ database: 'db', table: 't' }, { fields: [{ name: 'k', type: 'STRING NOT NULL' }], primaryKeys: ['k'], options: { bucket: '1' } });
  for (let i = 1; i <= 4; i++) commit(t, [{ k: `k${i}` }]);
  const kept = new KeptTables(catalog, 'db');
  const counter = new RowCounter();
  expect(counter.count(kept.get('t')!)).toEqual({ snapshotId: 4, rows: 4 });
  inAnotherProcess(
    root,
    `const t = new Catalog(root).getTable({ database: 'db', table: 't' });
     t.rollbackTo(1);
     for (const ks of [['x2', 'y2', 'z2'], ['x3', 'y3', 'z3'], ['x4']]) { const w = t.newWriter(); for (const k of ks) w.writeRecord({ k }); w.commit(); w.close(); }`,
  );
  const again = kept.get('t')!;
  expect(again.latestSnapshot()!.id, 'the same id as before the rollback').toBe(4);
  expect(again.scanRows()).toHaveLength(8);
  expect(counter.count(again)).toEqual({ snapshotId: 4, rows: 8 });
  // Unchanged since: the count kept (no scan), as before.
  expect(counter.count(again)).toEqual({ snapshotId: 4, rows: 8 });
});

// The Tables screen lists the tables of ingest and the inbox, whose writers this process holds
// while ingest runs (a rollback elsewhere then waits for the lock); after ingest stopped on an error
// they are released. The service's `bytesOf` is asked here directly, for a table of another
// warehouse that no writer of this process holds, as the Tables screen asks it for each table.
it("the Tables screen's bytes are read again after such a rollback", { timeout: 90_000 }, async () => {
  const data = join(dir, 'site');
  await initDataDir({ data, site: 'north', admin: { name: 'kari', pin: '2468' } });
  const site = await Site.start({ data, mqttPort: 0, httpPort: 0, ui: false, agentTimer: false });
  try {
    const root = join(dir, 'bytes');
    const catalog = new Catalog(root);
    catalog.createDatabase('db');
    const t = catalog.createTable({ database: 'db', table: 't' }, { fields: [{ name: 'k', type: 'STRING NOT NULL' }], primaryKeys: ['k'], options: { bucket: '1' } });
    for (let i = 1; i <= 4; i++) commit(t, [{ k: `k${i}` }]);
    const kept = new KeptTables(catalog, 'db');
    const service = site.service as unknown as { bytesOf(name: string, dir: string, latest: Snapshot | undefined): number };
    const bytesOf = () => {
      const table = kept.get('t')!;
      return service.bytesOf('t', table.paths.root, table.latestSnapshot());
    };
    const before = bytesOf();
    expect(before).toBeGreaterThan(0);
    inAnotherProcess(
      root,
      `const t = new Catalog(root).getTable({ database: 'db', table: 't' });
       t.rollbackTo(1);
       for (let c = 2; c <= 4; c++) {
         const w = t.newWriter();
         for (let i = 0; i < 400; i++) w.writeRecord({ k: 'row-' + c + '-' + i + '-'.repeat(40) });
         w.commit();
         w.close();
       }`,
    );
    expect(kept.get('t')!.latestSnapshot()!.id, 'the same id as before the rollback').toBe(4);
    expect(bytesOf(), "the folder holds the new commits' files").toBeGreaterThan(before);
  } finally {
    await site.stop();
  }
});
