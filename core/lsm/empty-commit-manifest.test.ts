// A commit that adds or removes no data file — new snapshot properties only, or (changelog-producer
// `input`) only a changelog — lists no manifest in its delta manifest list, as Paimon's
// FileStoreCommitImpl writes it (`manifestList.write(manifestFile.write(deltaFiles))`: the rolling
// manifest writer opens its file at the first entry, so no entries write no file). Before, each such
// commit wrote an empty manifest file that every later snapshot's base list carried until the next
// manifest merge.
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { TableSchema } from './schema.ts';
import { Table } from './table.ts';
import { paimonCheck, paimonCheckAvailable } from './testing/shared.ts';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function open(options: Record<string, string> = {}): { t: Table; dir: string } {
  const dir = mkdtempSync(join(tmpdir(), 'lsm-empty-commit-'));
  dirs.push(dir);
  const spec = { fields: [{ name: 'k', type: 'INT NOT NULL' }, { name: 'v', type: 'INT' }], primaryKeys: ['k'], options: { bucket: '1', 'write-only': 'true', ...options } };
  return { t: Table.create(dir, TableSchema.fromSpec(spec, 0)), dir };
}

const manifestFiles = (dir: string) => readdirSync(join(dir, 'manifest')).filter((n) => n.startsWith('manifest-') && !n.startsWith('manifest-list-'));

it('a commit of snapshot properties only writes no manifest file and lists none in its delta', () => {
  const { t, dir } = open();
  const w = t.newWriter();
  try {
    w.writeRecord({ k: 1, v: 1 });
    expect(w.commit({ pos: '1' }).snapshotId).toBe(1);
    const before = manifestFiles(dir);
    expect(w.commit({ pos: '2' }).snapshotId).toBe(2);
    expect(manifestFiles(dir)).toEqual(before);
  } finally {
    w.close();
  }
  const s = t.snapshots.latest()!;
  expect(s.properties).toEqual({ pos: '2' });
  expect(t.manifests.readList(s.deltaManifestList, s.deltaManifestListSize ?? null)).toEqual([]);
  expect(t.manifests.dataManifests(s)).toHaveLength(1);
  const r = t.reader();
  try {
    expect([...r.scan()]).toEqual([[1, 1]]);
  } finally {
    r.close();
  }
  if (paimonCheckAvailable('the paimon-check part of the empty-commit manifest test')) {
    expect(paimonCheck(dir).output).toMatch(/paimon-check: 0 problems/);
  }
});
