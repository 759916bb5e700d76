// Marking for expire.ts's sweep: the index manifests of retained snapshots and tags, and the
// index files (deletion vectors: `index/index-…`, or where the table puts them, Table.indexFilePath)
// they list, are live. `indexFiles` gets their paths.

import { decodeIndexManifest } from './manifest.ts';
import type { Snapshot } from './snapshot.ts';
import type { Table } from './table.ts';

export function markIndexFiles(table: Table, retained: readonly Snapshot[], manifests: Set<string>, indexFiles: Set<string>): void {
  const seen = new Set<string>();
  for (const s of retained) {
    const name = s.indexManifest;
    if (!name || seen.has(name)) continue;
    seen.add(name);
    manifests.add(name);
    const path = table.paths.manifestFile(name);
    const bytes = table.fileIO.readFileIfExists(path);
    if (bytes === undefined) continue; // a missing index manifest is the reader's Corruption, not the sweep's
    for (const e of decodeIndexManifest(bytes, path)) indexFiles.add(table.indexFilePath(e));
  }
}
