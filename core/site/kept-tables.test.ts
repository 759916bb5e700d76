// The site API's table reads (`tables`, `tags`, `history`, a proposal's columns) and the control
// socket's `status` go through one Table per table, kept for the site's life (status.ts
// `KeptTables`), not one opened per table per call: a Table opened afresh has empty tag and
// snapshot caches, so each `tables` call (the Tables screen reads it again at each commit) read
// every tag file of every table — hundreds to thousands per table on a site (agent run tags every
// minute, decision and checked tags). A kept Table still sees what others write: the ingest
// writer's commits, another Table's tags and commits, an ALTER (opened again), a dropped table.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, utimesSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import mqtt from 'mqtt';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { Catalog, LocalFileIO, Table } from '../lsm/index.ts';
import { readModuleSecrets } from './demo/run.ts';
import { demoConfig } from './demo/site.ts';
import { initDataDir } from './init.ts';
import { DEMO_ADMIN, Site } from './site.ts';
import { SnapshotManager } from '../lsm/snapshot-manager.ts';
import { KeptTables } from '../lsm/index.ts';
import { session } from './test-support/session.ts';

const DB = 'site_demo';
const TAGS = 40;

let dir: string;
let site: Site;

/** Ages every file of a table's `tag/` and the directory by an hour: past core/lsm's racy window (2 s), as a site's tags mostly are. */
function ageTags(root: string): void {
  const tagDir = join(root, 'tag');
  const old = new Date(Date.now() - 3_600_000);
  for (const n of readdirSync(tagDir)) utimesSync(join(tagDir, n), old, old);
  utimesSync(tagDir, old, old);
}

/** Counts Table opens and reads of tag files while `f` runs. */
async function counted(f: () => unknown): Promise<{ opens: number; tagReads: number; cachesDropped: number }> {
  const opens = vi.spyOn(Table, 'open');
  const dropped = vi.spyOn(SnapshotManager.prototype, 'invalidate');
  const isTag = (p: unknown) => String(p).includes('/tag/');
  const read = vi.spyOn(LocalFileIO.prototype, 'readFile');
  const readIf = vi.spyOn(LocalFileIO.prototype, 'readFileIfExists');
  try {
    await f();
    return { opens: opens.mock.calls.length, tagReads: [...read.mock.calls, ...readIf.mock.calls].filter((c) => isTag(c[0])).length, cachesDropped: dropped.mock.calls.length };
  } finally {
    opens.mockRestore();
    dropped.mockRestore();
    read.mockRestore();
    readIf.mockRestore();
  }
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'tilstand-kept-tables-'));
  await initDataDir({ data: join(dir, 'data'), site: 'demo', config: (c) => demoConfig(c), admin: DEMO_ADMIN });
  site = await Site.start({ data: join(dir, 'data'), demo: true, mqttPort: 0, httpPort: 0, demoStepMs: 600_000, agentTimer: false, ui: false });
  await site.users.add({ name: 'Lena', role: 'shift_lead', pin: '2580' });
  for (let i = 0; i < 200; i++) {
    site.ingestor.commitAll();
    const w = site.catalog.getTable({ database: DB, table: 'work_queue' }).scanRows();
    if (w.length >= 30) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  // A site's state tables carry many tags (the agent tags them every minute).
  for (const name of ['stock', 'work_queue', 'resources']) {
    const t = site.catalog.getTable({ database: DB, table: name });
    for (let i = 0; i < TAGS; i++) t.createTag(`agent-old-${i}`, undefined, 7 * 86_400_000);
    ageTags(t.paths.root);
  }
}, 60_000);

afterAll(async () => {
  await site?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('the site API reads each table through one Table kept for the site', () => {
  it('opens no Table and reads no tag file again at later tables, tags, history and status calls', async () => {
    const api = site.service;
    const s = session();
    await api.call('signIn', { user: 'Lena', secret: '2580' }, s);
    const calls = async () => {
      await api.call('tables', {}, s);
      await api.call('tags', { table: 'work_queue' }, s);
      await api.call('history', { table: 'stock', at: { latest: true } }, s);
      await api.call('history', { table: 'work_queue', at: { tag: 'agent-old-3' } }, s);
      site.status();
    };
    await calls();
    const again = await counted(calls);
    // Before: a Table per table per call (5 by tables, 1 by tags and by each history, 5 by
    // status) and every tag file of every table read by tables and by tags. The site's writers hold
    // every table's lock: no snapshot cache is dropped.
    expect(again, 'Tables opened, tag files read and snapshot caches dropped by the second round of calls').toEqual({ opens: 0, tagReads: 0, cachesDropped: 0 });
  });

  it('shows the ingest writer’s commit, another Table’s tag and the agent’s commit and tags at the next call', { timeout: 60_000 }, async () => {
    const api = site.service;
    const s = session();
    await api.call('signIn', { user: 'Lena', secret: '2580' }, s);
    const of = async (name: string) => (await api.call('tables', {}, s)).find((t) => t.table === name)!;
    const wqBefore = await of('work_queue');
    const dlBefore = await of('dead_letters');
    const dlRows = (await api.call('history', { table: 'dead_letters', at: { latest: true } }, s)).rows.length;

    // A tag made through another Table object.
    site.catalog.getTable({ database: DB, table: 'work_queue' }).createTag('by-another-table');
    expect((await of('work_queue')).tags).toBe(wqBefore.tags + 1);
    expect((await api.call('tags', { table: 'work_queue', search: 'by-another' }, s)).map((t) => t.name)).toEqual(['by-another-table']);

    // A commit by the ingest writer: a refused event becomes a dead letter.
    const inv = readModuleSecrets(join(dir, 'data', 'secrets', 'modules.json')).modules.inventory!;
    const c = await mqtt.connectAsync(site.mqttUrl, { username: inv.username, password: inv.password, clientId: 'kept-tables-test', protocolVersion: 4 });
    await c.publishAsync('tilstand/demo/events/inventory/stock', 'not an event', { qos: 1 });
    await c.endAsync();
    const deadline = Date.now() + 20_000;
    for (let i = 0; i < 200 && Date.now() < deadline; i++) {
      site.ingestor.commitAll();
      if ((site.catalog.getTable({ database: DB, table: 'dead_letters' }).latestSnapshot()?.id ?? 0) !== (dlBefore.snapshotId ?? 0)) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    const dlAfter = await of('dead_letters');
    expect(dlAfter.snapshotId).not.toBe(dlBefore.snapshotId);
    expect(dlAfter.snapshotId).toBe(site.catalog.getTable({ database: DB, table: 'dead_letters' }).latestSnapshot()!.id);
    const dl = await api.call('history', { table: 'dead_letters', at: { latest: true } }, s);
    expect(dl.snapshotId).toBe(dlAfter.snapshotId);
    expect(dl.rows.length).toBe(dlRows + 1);
    expect(site.status().tables.find((t) => t.table === 'dead_letters')!.rows).toBe(dlRows + 1);

    // The agent's run: a commit to approval_inbox through the inbox's Table, and a run tag on the state tables through the agent's.
    const inboxBefore = await api.call('history', { table: 'approval_inbox', at: { latest: true } }, s);
    site.runAgent();
    const inboxAfter = await api.call('history', { table: 'approval_inbox', at: { latest: true } }, s);
    expect(inboxAfter.snapshotId).not.toBe(inboxBefore.snapshotId);
    expect(inboxAfter.rows.length).toBeGreaterThan(inboxBefore.rows.length);
    expect((await of('work_queue')).tags).toBeGreaterThan(wqBefore.tags + 1);
  });
});

describe('KeptTables', () => {
  it('keeps one Table per table; opens it again after an ALTER; forgets a dropped table', () => {
    const root = mkdtempSync(join(tmpdir(), 'tilstand-kept-tables-unit-'));
    try {
      const catalog = new Catalog(root);
      catalog.createDatabase('db');
      const mine = catalog.createTable({ database: 'db', table: 't' }, { fields: [{ name: 'k', type: 'STRING NOT NULL' }], primaryKeys: ['k'], options: { bucket: '1' } });
      const kept = new KeptTables(catalog, 'db');
      expect(kept.get('none')).toBeUndefined();
      const first = kept.get('t')!;
      expect(kept.get('t')).toBe(first);

      // Another Table commits and tags: the kept one sees both.
      const w = mine.newWriter();
      w.writeRecord({ k: 'a' });
      w.commit();
      w.close();
      mine.createTag('t1');
      expect(kept.get('t')).toBe(first);
      expect(first.latestSnapshot()?.id).toBe(1);
      expect(first.listTags().map((t) => t.name)).toEqual(['t1']);

      // An ALTER elsewhere: opened again, in the new columns.
      mine.alter([{ kind: 'addColumn', name: 'note', type: 'STRING' }]);
      const altered = kept.get('t')!;
      expect(altered).not.toBe(first);
      expect(altered.schema.fields.map((f) => f.name)).toEqual(['k', 'note']);
      expect(kept.get('t')).toBe(altered);

      catalog.dropTable({ database: 'db', table: 't' });
      expect(kept.get('t')).toBeUndefined();
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});

/**
 * While no writer of this process holds a table's lock (a table the site does not write, or ingest
 * stopped: its writers released), another process may roll it back, expire it, or drop it and make
 * it again. The kept Table's snapshot cache would hand out snapshots that are gone or that another
 * commit re-used the id of, and its schema would be the dropped table's.
 */
describe('KeptTables, a table another process writes', () => {
  const spec = (options: Record<string, string> = {}) => ({ fields: [{ name: 'k', type: 'STRING NOT NULL' }, { name: 'v', type: 'INT' }], primaryKeys: ['k'], options: { bucket: '1', ...options } });
  const commit = (t: Table, rows: Record<string, unknown>[]) => {
    const w = t.newWriter();
    for (const r of rows) w.writeRecord(r);
    w.commit();
    w.close();
  };
  /** Runs `body` in a child process with `Catalog` and `Table` imported and `root` the warehouse. */
  const inAnotherProcess = (root: string, body: string) => {
    const lsm = JSON.stringify(resolve(import.meta.dirname, '../lsm/index.ts'));
    const script = `import { Catalog, Table } from ${lsm};\nconst root = ${JSON.stringify(root)};\n${body}\nconsole.log('done');`;
    const child = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { encoding: 'utf8', timeout: 60_000 });
    expect(child.stdout.trim(), child.stderr).toBe('done');
  };
  const rowsOrError = (f: () => unknown[][]) => {
    try {
      return f();
    } catch (e) {
      return String(e);
    }
  };
  let root: string;
  let catalog: Catalog;
  beforeAll(() => {
    root = mkdtempSync(join(tmpdir(), 'tilstand-kept-tables-other-'));
    catalog = new Catalog(root);
    catalog.createDatabase('db');
  });
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it('a rollback and new commits there: the new state, not the cached one', { timeout: 60_000 }, () => {
    const mine = catalog.createTable({ database: 'db', table: 'rolled' }, spec());
    for (let i = 1; i <= 4; i++) commit(mine, [{ k: `k${i}`, v: i }]);
    const kept = new KeptTables(catalog, 'db');
    for (let i = 1; i <= 4; i++) kept.get('rolled')!.scanRows({ snapshotId: i });
    expect(kept.get('rolled')!.scanRows().length).toBe(4);
    inAnotherProcess(root, `
      const t = new Catalog(root).getTable({ database: 'db', table: 'rolled' });
      t.rollbackTo(2);
      for (const r of [{ k: 'x3', v: 30 }, { k: 'x4', v: 40 }]) { const w = t.newWriter(); w.writeRecord(r); w.commit(); w.close(); }
    `);
    const now = [['k1', 1], ['k2', 2], ['x3', 30], ['x4', 40]];
    expect(rowsOrError(() => kept.get('rolled')!.scanRows()), 'the latest after a rollback and two commits elsewhere').toEqual(now);
    expect(rowsOrError(() => kept.get('rolled')!.scanRows({ snapshotId: 3 })), 'snapshot 3, committed again elsewhere').toEqual(now.slice(0, 3));
  });

  it('a snapshot expired there: a read of it is NotFound, not its cached rows', { timeout: 60_000 }, () => {
    const mine = catalog.createTable({ database: 'db', table: 'expired' }, spec({ 'snapshot.num-retained.min': '1', 'snapshot.num-retained.max': '3' }));
    for (let i = 1; i <= 3; i++) commit(mine, [{ k: `k${i}`, v: i }]);
    const kept = new KeptTables(catalog, 'db');
    expect(kept.get('expired')!.scanRows({ snapshotId: 1 })).toEqual([['k1', 1]]);
    inAnotherProcess(root, `
      const t = new Catalog(root).getTable({ database: 'db', table: 'expired' });
      for (let i = 4; i <= 6; i++) { const w = t.newWriter(); w.writeRecord({ k: 'k' + i, v: i }); w.commit(); w.close(); }
    `);
    expect(rowsOrError(() => kept.get('expired')!.scanRows({ snapshotId: 1 })), 'snapshot 1, expired by another process').toEqual(expect.stringMatching(/NotFound.*snapshot 1 /));
  });

  it('dropped and made again with other columns: the new table, not the dropped one', { timeout: 60_000 }, () => {
    const mine = catalog.createTable({ database: 'db', table: 'remade' }, spec());
    commit(mine, [{ k: 'a', v: 1 }]);
    commit(mine, [{ k: 'b', v: 2 }]);
    const kept = new KeptTables(catalog, 'db');
    expect(kept.get('remade')!.scanRows()).toEqual([['a', 1], ['b', 2]]);
    inAnotherProcess(root, `
      const c = new Catalog(root);
      c.dropTable({ database: 'db', table: 'remade' });
      const t = c.createTable({ database: 'db', table: 'remade' }, { fields: [{ name: 'id', type: 'INT NOT NULL' }, { name: 'name', type: 'STRING' }], primaryKeys: ['id'], options: { bucket: '1' } });
      for (const r of [{ id: 7, name: 'x' }, { id: 8, name: 'y' }]) { const w = t.newWriter(); w.writeRecord(r); w.commit(); w.close(); }
    `);
    const t = kept.get('remade')!;
    expect(t.schema.fields.map((f) => f.name), 'the columns after the table was made again').toEqual(['id', 'name']);
    expect(rowsOrError(() => t.scanRows()), 'its latest rows').toEqual([[7, 'x'], [8, 'y']]);
    expect(rowsOrError(() => t.scanRows({ snapshotId: 1 })), 'its snapshot 1').toEqual([[7, 'x']]);
  });
});
