// Test-only: rewrites a table this store wrote into a layout Java Paimon makes (there is no Java
// here), by re-encoding its manifests. dynamic-bucket.test.ts and java-file-locations.test.ts say
// which layouts, after the mirrored Paimon source.

import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { decodeIndexManifest, decodeManifest, decodeManifestList, encodeIndexManifest, encodeManifest, encodeManifestList, type IndexManifestEntry, type ManifestEntry } from '../manifest.ts';
import { Table } from '../table.ts';

export interface JavaLayoutOptions {
  /**
   * Recompute each manifest list entry's minBucket/maxBucket from its rewritten manifest (when
   * `entry` moves files to other buckets); else they stay as this store wrote them.
   */
  bucketRange?: boolean;
  /** Applied to each entry of every index manifest a snapshot or tag names; without it index manifests stay as written. */
  indexEntry?: (e: IndexManifestEntry) => IndexManifestEntry;
  /**
   * A snapshot's or tag's new indexManifest, set after its file is rewritten (so the callback may
   * open the table at that snapshot).
   */
  snapshotIndex?: (snapshotJson: Record<string, unknown>) => string | null;
}

/**
 * Rewrites every manifest (and the lists and snapshot/tag files naming them, with their new sizes)
 * with `entry` applied to each entry, re-encoded with the table's manifest codec; then sets
 * `options` in the schema.
 */
export function rewriteAsJava(dir: string, options: Record<string, string>, entry: (e: ManifestEntry) => ManifestEntry, layout: JavaLayoutOptions = {}): void {
  const { bucketRange = false, indexEntry, snapshotIndex } = layout;
  const codec = Table.open(dir).schema.options.manifestCompression;
  const m = (n: string) => join(dir, 'manifest', n);
  const manifestSizes = new Map<string, number>();
  const listSizes = new Map<string, number>();
  const indexDone = new Set<string>();
  const rewriteList = (name: string): number => {
    const done = listSizes.get(name);
    if (done !== undefined) return done;
    const metas = decodeManifestList(readFileSync(m(name)), name).map((meta) => {
      let size = manifestSizes.get(meta.fileName);
      if (size === undefined) {
        const bytes = encodeManifest(decodeManifest(readFileSync(m(meta.fileName)), meta.fileName).map(entry), codec);
        writeFileSync(m(meta.fileName), bytes);
        manifestSizes.set(meta.fileName, (size = bytes.length));
      }
      if (!bucketRange) return { ...meta, fileSize: size };
      const buckets = decodeManifest(readFileSync(m(meta.fileName)), meta.fileName).map((e) => e.bucket);
      return { ...meta, fileSize: size, minBucket: buckets.length ? Math.min(...buckets) : null, maxBucket: buckets.length ? Math.max(...buckets) : null };
    });
    const bytes = encodeManifestList(metas, codec);
    writeFileSync(m(name), bytes);
    listSizes.set(name, bytes.length);
    return bytes.length;
  };
  const files = [
    ...readdirSync(join(dir, 'snapshot')).filter((f) => f.startsWith('snapshot-')).map((f) => join(dir, 'snapshot', f)),
    ...(existsSync(join(dir, 'tag')) ? readdirSync(join(dir, 'tag')).filter((f) => f.startsWith('tag-')).map((f) => join(dir, 'tag', f)) : []),
  ];
  for (const f of files) {
    const s = JSON.parse(readFileSync(f, 'utf8')) as Record<string, unknown>;
    s.baseManifestListSize = rewriteList(s.baseManifestList as string);
    s.deltaManifestListSize = rewriteList(s.deltaManifestList as string);
    if (s.changelogManifestList) s.changelogManifestListSize = rewriteList(s.changelogManifestList as string);
    const im = s.indexManifest as string | null | undefined;
    if (indexEntry && im && !indexDone.has(im)) {
      indexDone.add(im);
      writeFileSync(m(im), encodeIndexManifest(decodeIndexManifest(readFileSync(m(im)), im).map(indexEntry), codec));
    }
    writeFileSync(f, JSON.stringify(s, null, 2));
    if (snapshotIndex) {
      s.indexManifest = snapshotIndex(s);
      writeFileSync(f, JSON.stringify(s, null, 2));
    }
  }
  const schemaFile = join(dir, 'schema', 'schema-0');
  const json = JSON.parse(readFileSync(schemaFile, 'utf8')) as { options: Record<string, string> };
  Object.assign(json.options, options);
  writeFileSync(schemaFile, JSON.stringify(json, null, 2));
}
