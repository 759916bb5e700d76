// What one snapshot (or tag) of a table needs at HQ, in the order it must arrive
// (paimon-format.md §1, §4, §5, §9):
//   phase 0  every schema file; the data files of the base + delta lists' live entries (and their
//            extra files); the changelog files of the changelog list; the statistics file
//   phase 1  the data manifests of the base and delta lists, the changelog manifests
//   phase 2  the manifest lists (base, delta, changelog)
//   phase 3  the pointer: snapshot/snapshot-N or tag/tag-<name>
// Phases are the dependency order: nothing of phase p is sent before every file of the phases
// below it in the same unit is at HQ and verified.
//
// Not supported: index manifests (deletion vectors, dynamic-bucket indexes) and files with an
// external path — the table store does not write them; a table that has them is refused loudly.

import { relative, sep } from 'node:path';
import { LsmError, type Snapshot, type Table } from '../lsm/index.ts';
import { changelogEntries, changelogManifestNames } from '../lsm/changelog.ts';

export interface PlannedFile {
  /** Path relative to the table root, '/'-separated. */
  rel: string;
  /** Absolute local path. */
  path: string;
  phase: 0 | 1 | 2;
}

export const PHASE = { files: 0, manifests: 1, lists: 2, pointer: 3, hints: 4, prune: 5, release: 6 } as const;

export function referencedFiles(table: Table, s: Snapshot): PlannedFile[] {
  if (s.indexManifest) {
    throw new LsmError('NotSupported', `${table.name} snapshot ${s.id} has an index manifest (deletion vectors or bucket index); syncing it is not supported`);
  }
  const root = table.paths.root;
  const rel = (p: string) => relative(root, p).split(sep).join('/');
  const out = new Map<string, PlannedFile>();
  const add = (path: string, phase: 0 | 1 | 2) => {
    const r = rel(path);
    if (!out.has(r)) out.set(r, { rel: r, path, phase });
  };
  for (const n of table.fileIO.list(table.paths.schemaDir)) if (/^schema-\d+$/.test(n)) add(`${table.paths.schemaDir}/${n}`, 0);
  const entries = [...table.manifests.liveFiles(s), ...changelogEntries(table, s)];
  for (const e of entries) {
    if (e.file.externalPath) throw new LsmError('NotSupported', `${table.name}: data file ${e.file.fileName} lives at an external path; not supported`);
    const p = table.dataFilePath(e.partition, e.bucket, e.file.fileName);
    add(p, 0);
    const dir = p.slice(0, p.length - e.file.fileName.length);
    for (const x of e.file.extraFiles) add(dir + x, 0);
  }
  if (s.statistics) add(`${root}/statistics/${s.statistics}`, 0);
  const lists = new Set([s.baseManifestList, s.deltaManifestList, ...(s.changelogManifestList ? [s.changelogManifestList] : [])]);
  for (const n of table.manifests.referencedNames(s)) if (!lists.has(n)) add(table.paths.manifestFile(n), 1);
  for (const n of changelogManifestNames(table, s)) add(table.paths.manifestFile(n), 1);
  for (const n of lists) add(table.paths.manifestFile(n), 2);
  return [...out.values()].sort((a, b) => a.phase - b.phase || (a.rel < b.rel ? -1 : 1));
}
