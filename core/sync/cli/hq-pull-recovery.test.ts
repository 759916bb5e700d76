// `tilstand hq pull` over a copy with an analyst's schema, after a pull that stopped midway, and
// how often it lists the site.
// - `--force` replaced the analyst's snapshots and tags, but an analyst's `schema-N` of the same
//   size as HQ's was taken for HQ's (a data file's resume check: names are unique, sizes tell) and
//   kept, then recorded as pulled: the copy said it was HQ's and read with the analyst's columns.
// - A pull that stopped between a table's pointer files (killed, a failed write) had written a
//   snapshot it never recorded: a plain rerun refused it as the analyst's own write, and only
//   `--force` went on.
// - The own-writes check listed the whole site, then the mirror listed it again.
import { readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { localFileIO, RowKind, Table } from '../../lsm/index.ts';
import { runCli } from '../../lsm/testing/cli.ts';
import { makeSite, tempDir, type SiteFixture } from '../test-support/site-fixture.ts';
import { shipToDirectory } from '../test-support/ship.ts';
import { DirectoryTarget } from '../targets/directory.ts';
import { runHq } from './hq.ts';

const cleanup: string[] = [];
afterAll(() => {
  for (const d of cleanup) rmSync(d, { recursive: true, force: true });
});
afterEach(() => {
  vi.restoreAllMocks();
});

/** Rows [from, to) of stock once a column was added to it (writeStock writes four values). */
function writeWide(fx: SiteFixture, from: number, to: number): void {
  const w = fx.table('stock').newWriter();
  try {
    for (let i = from; i < to; i++) w.write([`item-${i}`, 'loc-0', i, `note ${i}`, `extra ${i}`], RowKind.INSERT);
    w.commit();
  } finally {
    w.close();
  }
}

describe('hq pull --force over an analyst schema of the size of HQ\'s', () => {
  it('replaces it with HQ\'s, and the copy reads with HQ\'s columns', async () => {
    const fx = makeSite('54', { rows: 20 });
    const hqDir = tempDir('hq');
    const dest = join(tempDir('pulled'), 'warehouse');
    cleanup.push(fx.data, hqDir, join(dest, '..'));
    const pull = (...more: string[]) => runCli(runHq, ['pull', '--hq', hqDir, '--site', '54', '--out', dest, ...more]);
    await shipToDirectory(fx.data, fx.site, hqDir);
    expect((await pull()).code).toBe(0);

    // The analyst adds a column in the copy; the site adds another, of a name as long, and ships.
    const stockDir = join(dest, 'site_54.db', 'stock');
    Table.open(stockDir).alter([{ kind: 'addColumn', name: 'mine_a', type: 'STRING' }]);
    fx.table('stock').alter([{ kind: 'addColumn', name: 'site_b', type: 'STRING' }]);
    writeWide(fx, 20, 30);
    await shipToDirectory(fx.data, fx.site, hqDir);
    const atHq = join(hqDir, 'site_54.db', 'stock', 'schema', 'schema-1');
    const local = join(stockDir, 'schema', 'schema-1');
    expect(statSync(local).size).toBe(statSync(atHq).size);
    expect(readFileSync(local)).not.toEqual(readFileSync(atHq));

    const refused = await pull();
    expect(refused.code).toBe(3);
    expect(refused.err).toContain('stock/schema/schema-1');

    expect((await pull('--force')).code).toBe(0);
    expect(readFileSync(local)).toEqual(readFileSync(atHq));
    expect(Table.open(stockDir).schema.fields.map((f) => f.name)).toContain('site_b');
    expect(Table.open(stockDir).schema.fields.map((f) => f.name)).not.toContain('mine_a');
    expect((await pull()).code).toBe(0);
  }, 60_000);
});

describe('hq pull again after one that stopped between pointer files', () => {
  it('goes on without --force, also once the site has moved on', async () => {
    const fx = makeSite('55', { rows: 20 });
    const hqDir = tempDir('hq');
    const dest = join(tempDir('pulled'), 'warehouse');
    cleanup.push(fx.data, hqDir, join(dest, '..'));
    const pull = () => runCli(runHq, ['pull', '--hq', hqDir, '--site', '55', '--out', dest]);
    await shipToDirectory(fx.data, fx.site, hqDir);
    expect((await pull()).code).toBe(0);

    // The site changes its schema, commits and tags: HQ gets schema-1, a new snapshot and a tag.
    fx.table('stock').alter([{ kind: 'addColumn', name: 'extra', type: 'STRING' }]);
    writeWide(fx, 20, 30);
    fx.table('stock').createTag('audit');
    await shipToDirectory(fx.data, fx.site, hqDir);

    // The pull stops after writing the new snapshot JSON, before the tag's (what a kill there leaves).
    const replace = localFileIO.replaceAtomic.bind(localFileIO);
    let stopped = false;
    vi.spyOn(localFileIO, 'replaceAtomic').mockImplementation((path: string, data: Uint8Array) => {
      if (path.endsWith(join('stock', 'tag', 'tag-audit'))) {
        stopped = true;
        throw new Error('killed');
      }
      replace(path, data);
    });
    const broken = await pull();
    vi.restoreAllMocks();
    expect(stopped).toBe(true);
    expect(broken.code).not.toBe(0);
    const newest = fx.table('stock').latestSnapshot()!.id;
    expect(statSync(join(dest, 'site_55.db', 'stock', 'snapshot', `snapshot-${newest}`)).isFile()).toBe(true);

    // The site moves on (HQ's snapshot the stopped pull wrote is superseded there) before the rerun.
    writeWide(fx, 30, 40);
    await shipToDirectory(fx.data, fx.site, hqDir);
    const again = await pull();
    expect(again.err).not.toContain('holds writes that no pull made');
    expect(again.code).toBe(0);
    expect(Table.open(join(dest, 'site_55.db', 'stock')).listTags().map((t) => t.name)).toEqual(['audit']);
  }, 60_000);
});

describe('hq pull lists the site once', () => {
  it('checks for own writes and copies from one listing of the site (each table is listed again after its pointers)', async () => {
    const fx = makeSite('56', { rows: 20 });
    const hqDir = tempDir('hq');
    const dest = join(tempDir('pulled'), 'warehouse');
    cleanup.push(fx.data, hqDir, join(dest, '..'));
    await shipToDirectory(fx.data, fx.site, hqDir);
    const list = DirectoryTarget.prototype.list;
    const prefixes: string[] = [];
    vi.spyOn(DirectoryTarget.prototype, 'list').mockImplementation(async function (this: DirectoryTarget, prefix: string) {
      prefixes.push(prefix);
      return list.call(this, prefix);
    });
    expect((await runCli(runHq, ['pull', '--hq', hqDir, '--site', '56', '--out', dest])).code).toBe(0);
    expect(prefixes.filter((p) => p === 'site_56.db/')).toEqual(['site_56.db/']);
    expect(prefixes.filter((p) => p !== 'site_56.db/').sort()).toEqual(['site_56.db/approval_inbox/', 'site_56.db/decision_log/', 'site_56.db/stock/']);
  }, 60_000);
});
