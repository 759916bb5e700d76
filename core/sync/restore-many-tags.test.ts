// `tilstand restore` of a table with many tags. The restore checks that every file the latest
// snapshot and each tag name arrived (restore.ts `missingFile`), and the tags of a table share most
// of their manifests (an hourly tag every hour, the agent's run tags, decision tags). The check
// reads each manifest and manifest list once per restore, not once per tag naming it: the tags are
// listed in snapshot order, and the table store keeps what it read by name (core/lsm
// ManifestStore; the files are immutable). A manifest that does not read is not kept, so every tag
// naming it is found damaged, as is every tag naming a data file HQ lacks — not only the first.
import { readdirSync, readFileSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { join, sep } from 'node:path';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { localFileIO, type Snapshot, type Table } from '../lsm/index.ts';
import { restoreSite } from './restore.ts';
import { DirectoryTarget } from './targets/directory.ts';
import { makeSite, tempDir, writeStock, type SiteFixture } from './test-support/site-fixture.ts';
import { shipToDirectory } from './test-support/ship.ts';

const cleanup: string[] = [];
afterAll(() => {
  for (const d of cleanup) rmSync(d, { recursive: true, force: true });
});
afterEach(() => {
  vi.restoreAllMocks();
});

/** `count` commits of 3 rows each to stock after row `from`; returns the next row. */
function commits(fx: SiteFixture, from: number, count: number): number {
  for (let i = 0; i < count; i++, from += 3) writeStock(fx, from, from + 3, from);
  return from;
}

const names = (t: Table, s: Snapshot): Set<string> => new Set(t.manifests.referencedNames(s));
const liveFiles = (t: Table, s: Snapshot): Set<string> => new Set(t.manifests.liveFiles(s).map((e) => e.file.fileName));
const shared = (sets: Set<string>[], without: Set<string>[]): string[] => [...sets[0]!].filter((n) => sets.every((s) => s.has(n)) && without.every((s) => !s.has(n))).sort();

describe('restore of a table with many tags', () => {
  it('reads each manifest and manifest list once, however many tags name it', async () => {
    const fx = makeSite('rmt', { rows: 5 });
    const hq = tempDir('hq');
    const fresh = tempDir('fresh');
    cleanup.push(fx.data, hq, fresh);
    const stock = fx.table('stock');
    // 40 hourly tags, one per commit: past the 30 base manifests after which the base is merged.
    let row = 5;
    for (let i = 0; i < 40; i++) {
      row = commits(fx, row, 1);
      stock.createTag(`hourly-20260301${String(i).padStart(4, '0')}`);
    }
    await shipToDirectory(fx.data, fx.site, hq);

    const manifestDir = join(fresh, 'warehouse', 'site_rmt.db', 'stock', 'manifest') + sep;
    const reads = new Map<string, number>();
    for (const m of ['readFile', 'readFileIfExists'] as const) {
      const read = localFileIO[m].bind(localFileIO);
      vi.spyOn(localFileIO, m).mockImplementation((path: string) => {
        if (path.startsWith(manifestDir)) reads.set(path.slice(manifestDir.length), (reads.get(path.slice(manifestDir.length)) ?? 0) + 1);
        return read(path) as Buffer;
      });
    }
    const note = await restoreSite({ dataDir: fresh, target: new DirectoryTarget(hq), site: fx.site });
    expect(note.tables.stock!.tags).toHaveLength(40);
    expect(note.damagedTags).toBeUndefined();
    // Every manifest HQ holds is named by the latest snapshot or a tag, so the check read each.
    expect([...reads.keys()].sort()).toEqual(readdirSync(manifestDir).sort());
    expect([...reads].filter(([, n]) => n > 1), 'manifest files read more than once').toEqual([]);
  }, 60_000);

  it('names every tag that shares a damaged manifest or a data file HQ lacks, not only the first', async () => {
    const fx = makeSite('rms', { rows: 5 });
    const hq = tempDir('hq');
    const fresh = tempDir('fresh');
    cleanup.push(fx.data, hq, fresh);
    const stock = fx.table('stock');
    // Tags a and b on consecutive commits share their base manifests; so do c and d, 35 commits
    // later (the base merged since: none of a's and b's manifests). 35 more and the latest names
    // none of the four's, and the data files the four share have been compacted away.
    let row = commits(fx, 5, 1);
    stock.createTag('a');
    row = commits(fx, row, 1);
    stock.createTag('b');
    row = commits(fx, row, 35);
    stock.createTag('c');
    row = commits(fx, row, 1);
    stock.createTag('d');
    commits(fx, row, 35);
    const tag = (n: string) => stock.tags.get(n).snapshot;
    const latest = stock.latestSnapshot()!;
    const manifest = shared([names(stock, tag('a')), names(stock, tag('b'))], [names(stock, latest), names(stock, tag('c')), names(stock, tag('d'))])[0];
    const dataFile = shared([liveFiles(stock, tag('c')), liveFiles(stock, tag('d'))], [liveFiles(stock, latest), liveFiles(stock, tag('a')), liveFiles(stock, tag('b'))])[0];
    expect(manifest, 'a manifest a and b share, no other snapshot names').toBeDefined();
    expect(dataFile, 'a data file c and d share, no other snapshot names').toBeDefined();
    await shipToDirectory(fx.data, fx.site, hq);

    // The manifest garbled at HQ (its size kept: it reads, and does not decode), the data file gone.
    const atHq = join(hq, 'site_rms.db', 'stock');
    const bytes = readFileSync(join(atHq, 'manifest', manifest!));
    writeFileSync(join(atHq, 'manifest', manifest!), Buffer.alloc(bytes.length, 0x5a));
    const data = stock.manifests.liveFiles(tag('c')).find((e) => e.file.fileName === dataFile)!;
    const dataPath = stock.dataFilePath(data.partition, data.bucket, dataFile!);
    unlinkSync(join(atHq, dataPath.slice(stock.paths.root.length + 1)));

    const note = await restoreSite({ dataDir: fresh, target: new DirectoryTarget(hq), site: fx.site });
    const damaged = Object.fromEntries((note.damagedTags ?? []).map((d) => [d.tag, d.error]));
    expect(Object.keys(damaged).sort()).toEqual(['stock/a', 'stock/b', 'stock/c', 'stock/d']);
    for (const t of ['a', 'b']) expect(damaged[`stock/${t}`]).toMatch(new RegExp(`a manifest it names does not read: .*${manifest}`));
    for (const t of ['c', 'd']) expect(damaged[`stock/${t}`]).toContain(`which HQ does not hold`);
    for (const t of ['c', 'd']) expect(damaged[`stock/${t}`]).toContain(dataFile);
    expect(note.tables.stock!.tags).toEqual([]);
  }, 60_000);
});
