// The files one snapshot of a table needs, relative to the table root: every schema file, the
// data files (and their extra files) of the base + delta lists' live entries and of the changelog
// list, the statistics file, the manifests and the manifest lists. The same set core/sync ships
// (core/sync/plan.ts), which core/replay may not import.

import { relative, sep } from 'node:path';
import { LsmError, type Snapshot, type Table } from '../lsm/index.ts';
import { changelogEntries, changelogManifestNames } from '../lsm/changelog.ts';

export function snapshotFiles(table: Table, s: Snapshot): string[] {
  if (s.indexManifest) throw new LsmError('NotSupported', `${table.name} snapshot ${s.id} has an index manifest (deletion vectors or bucket index); exporting it is not supported`);
  const root = table.paths.root;
  const out = new Set<string>();
  const add = (path: string) => out.add(relative(root, path).split(sep).join('/'));
  for (const n of table.fileIO.list(table.paths.schemaDir)) if (/^schema-\d+$/.test(n)) add(table.paths.schemaFile(Number(n.slice(7))));
  for (const e of [...table.manifests.liveFiles(s), ...changelogEntries(table, s)]) {
    if (e.file.externalPath) throw new LsmError('NotSupported', `${table.name}: data file ${e.file.fileName} lives at an external path; not supported`);
    const p = table.dataFilePath(e.partition, e.bucket, e.file.fileName);
    add(p);
    const dir = p.slice(0, p.length - e.file.fileName.length);
    for (const x of e.file.extraFiles) add(dir + x);
  }
  if (s.statistics) add(`${root}/statistics/${s.statistics}`);
  for (const n of table.manifests.referencedNames(s)) add(table.paths.manifestFile(n));
  for (const n of changelogManifestNames(table, s)) add(table.paths.manifestFile(n));
  return [...out].sort();
}
