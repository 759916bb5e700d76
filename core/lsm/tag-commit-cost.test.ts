// What a commit reads of a table's tags (core/lsm DESIGN.md, "Commit cost and tags"): a writer
// that stays open reads no tag file and no tagged snapshot's manifest again while the tags stay as
// they are, however many there are; a tag another Table (another process: the CLI, the sync
// engine, the agent) creates or deletes between two commits is seen at the next one — the files a
// new tag holds are kept, a deleted tag's files are deleted — for the price of reading that tag.

import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Catalog } from './catalog.ts';
import { LocalFileIO } from './file-io.ts';
import { Table } from './table.ts';
import { modelDir, removeModelDirs } from './testing/model.ts';
import { ageTags } from './testing/tags.ts';

afterAll(() => removeModelDirs());

/** Counts reads by directory (tag/, manifest/). */
class CountingIO extends LocalFileIO {
  reads = { tag: 0, manifest: 0 };
  override readFileIfExists(path: string): Buffer | undefined {
    if (path.includes('/tag/')) this.reads.tag++;
    if (path.includes('/manifest/')) this.reads.manifest++;
    return super.readFileIfExists(path);
  }
  override readFile(path: string): Buffer {
    if (path.includes('/tag/')) this.reads.tag++;
    if (path.includes('/manifest/')) this.reads.manifest++;
    return super.readFile(path);
  }
  reset(): void {
    this.reads = { tag: 0, manifest: 0 };
  }
}

const TAGS = 60;
const DAY = 86_400_000;

function dataFiles(root: string): string[] {
  return readdirSync(join(root, 'bucket-0')).filter((n) => n.startsWith('data-'));
}

describe('a commit and the table’s tags', () => {
  it('reads no tag and no tagged manifest while the tags stay the same; sees another Table’s tag create and delete', () => {
    let now = 1_800_000_000_000;
    const clock = () => now;
    const io = new CountingIO();
    const catalog = new Catalog(modelDir('tag-commit-cost'), { clock, fileIO: io });
    catalog.createDatabase('db');
    const options = { bucket: '1', 'snapshot.num-retained.min': '1', 'snapshot.num-retained.max': '2', 'full-compaction.delta-commits': '1' };
    const t = catalog.createTable({ database: 'db', table: 't' }, { fields: [{ name: 'k', type: 'INT NOT NULL' }, { name: 'v', type: 'INT' }], primaryKeys: ['k'], options });
    const root = t.paths.root;
    const w = t.newWriter();
    // Each commit rewrites the one key (full compaction), so each tag holds a data file of its own.
    const commit = (v: number) => {
      now += 60_000;
      w.writeRecord({ k: 1, v });
      return w.commit();
    };
    for (let i = 0; i < TAGS; i++) {
      commit(i);
      t.createTag(`agent-${i}`, undefined, 7 * DAY);
    }
    commit(-1);
    ageTags(root);
    commit(-2); // the listing after the aging (the directory's identity changed)

    io.reset();
    const r = commit(-3);
    expect(r.expire?.expiredSnapshots.length, 'a snapshot expired in the measured commit').toBeGreaterThan(0);
    expect(io.reads.tag, 'tag files read by a commit of a writer that stays open').toBe(0);
    // The new snapshots' own lists and manifests at most, none of the tags'.
    expect(io.reads.manifest, 'manifest files read by that commit').toBeLessThanOrEqual(6);

    // Another Table (another process) tags the latest snapshot; the next commits replace its data
    // file and expire the snapshot: the file stays for the tag.
    const other = Table.open(root, { clock });
    const tagged = other.createTag('decision-1', undefined, 365 * DAY);
    const heldByTag = other.manifests.liveFiles(tagged.snapshot).map((e) => e.file.fileName);
    expect(heldByTag.length).toBeGreaterThan(0);
    io.reset();
    commit(-4);
    expect(io.reads.tag, 'tag files read by the commit after another Table created one').toBeLessThanOrEqual(2);
    commit(-5);
    commit(-6);
    expect(Table.open(root).snapshots.exists(tagged.snapshot.id), 'the tagged snapshot has expired').toBe(false);
    for (const f of heldByTag) expect(dataFiles(root), `data file ${f} the new tag holds`).toContain(f);

    // The other Table deletes the tag: the next commit that expires something deletes its files.
    other.deleteTag('decision-1');
    commit(-7);
    for (const f of heldByTag) expect(dataFiles(root), `data file ${f} of the deleted tag`).not.toContain(f);
    // Every remaining tag's files are still there.
    const fresh = Table.open(root);
    for (const tag of fresh.listTags()) for (const e of fresh.manifests.liveFiles(tag.snapshot)) expect(dataFiles(root)).toContain(e.file.fileName);
    w.close();
  });
});
