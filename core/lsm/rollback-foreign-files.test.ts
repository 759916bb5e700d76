// A destructive rollback deletes the files of the snapshots and tags it removes (rollback.ts) —
// and nothing else. It used to end with orphan removal at age 0, which also deleted every file no
// snapshot names yet: another process's write under way (a tag create or a consumer's progress,
// both written without the writer lock; a Java writer's new data and manifest files before its
// commit), so that write failed or its commit named missing files. A removed snapshot whose
// files are damaged is removed all the same, as before (its files are left to expiration's next
// listing sweep).

import { existsSync, mkdirSync, mkdtempSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { changelogEntries, changelogManifestNames } from './changelog.ts';
import { tempNameFor } from './file-io.ts';
import { TableSchema } from './schema.ts';
import { Table } from './table.ts';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const SPEC = {
  fields: [{ name: 'k', type: 'INT NOT NULL' }, { name: 'v', type: 'STRING' }],
  primaryKeys: ['k'],
  options: { bucket: '1', 'changelog-producer': 'input' },
};

/** Every file of a snapshot: its manifest lists, manifests, data files, changelog manifests and files (as paths). */
function filesOf(t: Table, id: number): Set<string> {
  const s = t.snapshots.get(id);
  const m = t.paths.manifestDir;
  const out = new Set<string>([s.baseManifestList, s.deltaManifestList, ...(s.changelogManifestList ? [s.changelogManifestList] : [])].map((n) => `${m}/${n}`));
  for (const n of [...t.manifests.referencedNames(s), ...changelogManifestNames(t, s)]) out.add(`${m}/${n}`);
  for (const e of [...t.manifests.liveFiles(s), ...changelogEntries(t, s)]) out.add(t.dataFilePath(e.partition, e.bucket, e.file.fileName, e.file.externalPath));
  return out;
}

describe('destructive rollback', () => {
  it("deletes the rolled-back snapshots' files and keeps files another process is writing", () => {
    const d = mkdtempSync(join(tmpdir(), 'lsm-rollback-foreign-'));
    dirs.push(d);
    const t = Table.create(join(d, 't'), TableSchema.fromSpec(SPEC, Date.now()));
    const w = t.newWriter();
    for (let k = 1; k <= 3; k++) {
      w.writeRecord({ k, v: `v${k}` });
      w.commit();
    }
    t.createTag('third', 3);
    const kept = filesOf(t, 1);
    const rolledBack = [...new Set([...filesOf(t, 2), ...filesOf(t, 3)])].filter((p) => !kept.has(p));
    expect(rolledBack.length).toBeGreaterThan(3);

    // Another process, at this moment: a tag create and a follower's progress between the temp
    // file's write and its link (no writer lock), and a Java writer's files before its commit.
    const foreign = [
      join(t.paths.root, 'tag', tempNameFor('tag-other')),
      join(t.paths.root, 'consumer', tempNameFor('consumer-follower')),
      join(t.paths.root, 'bucket-0', 'data-7f3c1a2e-5b4d-4c6e-8f90-123456789abc-0.parquet'),
      join(t.paths.manifestDir, 'manifest-7f3c1a2e-5b4d-4c6e-8f90-123456789abc-0'),
    ];
    mkdirSync(join(t.paths.root, 'consumer'), { recursive: true });
    for (const p of foreign) writeFileSync(p, 'in flight');

    const r = w.rollbackTo(1);
    w.close();
    expect(r.removedSnapshots).toEqual([3, 2]);
    expect(r.removedTags).toEqual(['third']);
    expect(foreign.filter((p) => !existsSync(p))).toEqual([]);
    expect(rolledBack.filter((p) => existsSync(p))).toEqual([]);
    expect(new Set(r.deletedFiles)).toEqual(new Set(rolledBack));
    expect([...kept].filter((p) => !existsSync(p))).toEqual([]);
    expect(t.scanRows()).toEqual([[1, 'v1']]);
  });

  it('goes past a later snapshot whose files are damaged, as before: the rollback is what gets rid of it', () => {
    for (const damage of ['snapshot file', 'manifest list'] as const) {
      const d = mkdtempSync(join(tmpdir(), 'lsm-rollback-foreign-'));
      dirs.push(d);
      const t = Table.create(join(d, 't'), TableSchema.fromSpec(SPEC, Date.now()));
      const w = t.newWriter();
      for (let k = 1; k <= 3; k++) {
        w.writeRecord({ k, v: `v${k}` });
        w.commit();
      }
      w.close();
      // Snapshot 2, not the latest: a writer opens on the latest's files.
      const second = t.snapshots.get(2);
      truncateSync(damage === 'snapshot file' ? t.paths.snapshotFile(2) : join(t.paths.manifestDir, second.deltaManifestList), 5);
      // A process of its own (nothing cached): the CLI's rollback.
      const fresh = Table.open(join(d, 't')).newWriter();
      const r = fresh.rollbackTo(1);
      fresh.close();
      expect(r.removedSnapshots, damage).toEqual([3, 2]);
      expect(Table.open(join(d, 't')).scanRows(), damage).toEqual([[1, 'v1']]);
    }
  });
});
