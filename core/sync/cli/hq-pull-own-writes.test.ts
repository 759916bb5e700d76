// `tilstand hq pull` again into a warehouse an analyst has written in: a commit of their own (a
// snapshot after the pulled one) and a tag of their own with a name the site later gave a tag
// too. The pull made the copy HQ's again: it removed every snapshot JSON HQ does not have and
// wrote HQ's tag JSON over the analyst's, so their rows and their tag were gone, silently. Now
// the pull refuses (exit 3, nothing written), naming the files, unless --force; a pull over a
// copy nobody wrote in goes on as before.
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { RowKind, Table } from '../../lsm/index.ts';
import { runCli } from '../../lsm/testing/cli.ts';
import { makeSite, tempDir, writeStock } from '../test-support/site-fixture.ts';
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

describe('hq pull into a warehouse with writes of its own', () => {
  it('refuses, naming the files it would lose, unless --force; pulls again over a copy nobody wrote in', async () => {
    const fx = makeSite('51', { rows: 20 });
    const hqDir = tempDir('hq');
    const dest = join(tempDir('pulled'), 'warehouse');
    cleanup.push(fx.data, hqDir, join(dest, '..'));
    const pull = (...more: string[]) => runCli(runHq, ['pull', '--hq', hqDir, '--site', '51', '--out', dest, ...more]);
    await shipToDirectory(fx.data, fx.site, hqDir);
    expect((await pull()).code).toBe(0);

    // The site moves on; a second pull over an untouched copy replaces its snapshot with HQ's newer
    // one — also over a copy a version before the pull's record made (its one snapshot is the pull's).
    rmSync(join(dest, 'site_51.db', '.tilstand', 'pulled.json'));
    writeStock(fx, 20, 30, 2);
    await shipToDirectory(fx.data, fx.site, hqDir);
    expect((await pull()).code).toBe(0);

    // The analyst commits a row and tags it in the pulled copy.
    const stockDir = join(dest, 'site_51.db', 'stock');
    const mine = Table.open(stockDir);
    const w = mine.newWriter({ commitUser: 'analyst' });
    w.write(['item-analyst', 'loc-x', 1, 'mine'], RowKind.INSERT);
    const ownSnapshot = w.commit().snapshotId!;
    w.close();
    mine.createTag('baseline', ownSnapshot);
    const ownTag = readFileSync(join(stockDir, 'tag', 'tag-baseline'));

    // The site commits and tags a 'baseline' of its own; HQ gets both.
    writeStock(fx, 30, 40, 3);
    fx.table('stock').createTag('baseline');
    await shipToDirectory(fx.data, fx.site, hqDir);

    const refused = await pull();
    expect(refused.code).toBe(3);
    expect(refused.out).toBe('');
    expect(refused.err).toBe(
      `tilstand: ${join(dest, 'site_51.db')} holds writes that no pull made, which this pull would remove or overwrite: stock/snapshot/snapshot-${ownSnapshot}, stock/tag/tag-baseline; ` +
        'pull into another warehouse, or pass --force to replace them with HQ\'s copy\n',
    );
    // Nothing was written: the analyst's snapshot and tag are as they were.
    expect(existsSync(join(stockDir, 'snapshot', `snapshot-${ownSnapshot}`))).toBe(true);
    expect(readFileSync(join(stockDir, 'tag', 'tag-baseline'))).toEqual(ownTag);
    expect(Table.open(stockDir).scanRows().some((r) => r[0] === 'item-analyst')).toBe(true);

    expect((await pull('--force')).code).toBe(0);
    expect(Table.open(stockDir).scanRows().some((r) => r[0] === 'item-analyst')).toBe(false);
    // What --force wrote is the pull's own: the next pull goes on.
    expect((await pull()).code).toBe(0);
  }, 60_000);
});

describe('hq pull while the site syncs', () => {
  it('records what the copy got, not what HQ listed first: the next pull over it goes on', async () => {
    // The site ships a new snapshot (superseding the one listed) between the pull's first listing
    // and its copy, which takes the new one. Recorded from the first listing, that snapshot was no
    // pull's: the next pull refused it as the analyst's own write (exit 3), though nobody wrote.
    const fx = makeSite('52', { rows: 20 });
    const hqDir = tempDir('hq');
    const dest = join(tempDir('pulled'), 'warehouse');
    cleanup.push(fx.data, hqDir, join(dest, '..'));
    const pull = () => runCli(runHq, ['pull', '--hq', hqDir, '--site', '52', '--out', dest]);
    await shipToDirectory(fx.data, fx.site, hqDir);
    const list = DirectoryTarget.prototype.list;
    let synced = false;
    vi.spyOn(DirectoryTarget.prototype, 'list').mockImplementation(async function (this: DirectoryTarget, prefix: string) {
      const listed = await list.call(this, prefix);
      if (!synced && prefix === 'site_52.db/') {
        synced = true;
        writeStock(fx, 20, 30, 2);
        await shipToDirectory(fx.data, fx.site, hqDir);
      }
      return listed;
    });
    expect((await pull()).code).toBe(0);
    expect(synced).toBe(true);
    vi.restoreAllMocks();
    const again = await pull();
    expect(again.err).not.toContain('holds writes that no pull made');
    expect(again.code).toBe(0);
  }, 60_000);
});

describe('hq pull again after one that failed midway', () => {
  it('goes on: what the failed pull wrote of the tables it finished is its own', async () => {
    // The pull fails in its last table (a read from HQ fails) after it wrote the new tag of an
    // earlier one. Recorded only once the whole pull was done, that tag was no pull's, and the
    // pull run again refused it as the analyst's own write (exit 3), though nobody wrote.
    const fx = makeSite('53', { rows: 20 });
    const hqDir = tempDir('hq');
    const dest = join(tempDir('pulled'), 'warehouse');
    cleanup.push(fx.data, hqDir, join(dest, '..'));
    const pull = () => runCli(runHq, ['pull', '--hq', hqDir, '--site', '53', '--out', dest]);
    await shipToDirectory(fx.data, fx.site, hqDir);
    expect((await pull()).code).toBe(0);
    fx.table('approval_inbox').createTag('audit');
    writeStock(fx, 20, 30, 2);
    await shipToDirectory(fx.data, fx.site, hqDir);
    const get = DirectoryTarget.prototype.get;
    let failed = false;
    vi.spyOn(DirectoryTarget.prototype, 'get').mockImplementation(async function (this: DirectoryTarget, key: string) {
      if (!failed && /^site_53\.db\/stock\/bucket-/.test(key)) {
        failed = true;
        throw new Error('connection reset');
      }
      return get.call(this, key);
    });
    const broken = await pull();
    expect(failed).toBe(true);
    expect(broken.code).not.toBe(0);
    expect(existsSync(join(dest, 'site_53.db', 'approval_inbox', 'tag', 'tag-audit'))).toBe(true);
    vi.restoreAllMocks();
    const again = await pull();
    expect(again.err).not.toContain('holds writes that no pull made');
    expect(again.code).toBe(0);
  }, 60_000);
});
