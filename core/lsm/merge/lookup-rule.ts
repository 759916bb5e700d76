// Which records of a key are folded, for the tables Java Paimon reads "by lookup".
//
// Java wraps a primary-key table's merge engine in LookupMergeFunction when the table needs lookup
// (PrimaryKeyFileStoreTable: `options.needLookup()`), and uses the wrapped function for batch
// reads (MergeFileSplitRead) and compactions alike. Per key, it keeps the key's records in merge
// order and passes on to the engine only those at level ≤ 0 and the one record of the lowest
// level above 0 (`pickHighLevel`: the first of the smallest level; a sorted run holds a key once).
// The high record is not moved: it is folded at its place in merge order (sequence fields, then
// sequence number), as are the level-0 records. Records of the key at higher levels are stale:
// the compaction that wrote the lower record had looked the key up and written its complete value.
//
// Here the rule applies where Java's batch read takes that merge: `changelog-producer=lookup` or
// `force-lookup` (Java's fourth trigger: lookup compactions without the changelog), without
// deletion vectors and not first-row. With deletion vectors or first-row Java reads level ≥ 1 raw
// (raw-scan.ts; compaction/lookup-levels.ts), and tables without lookup fold every record of a
// key. This store does not create a table with `force-lookup` (not an option it takes), but it
// opens Java's: read by the other rule, a table Java had compacted read a sum twice, and this
// store's own compactions (no lookups, files moved up from level 0 as they are) wrote partial
// values above complete ones that Java then read alone (compaction/lookup-levels.ts).

import { deletionVectorsEnabled } from '../deletion-vector.ts';
import type { TableSchema } from '../schema.ts';

/**
 * Whether a key of this table is the fold of its level-0 records and its record of the lowest
 * level above 0 only (Java's LookupMergeFunction), not of all its records. Decided once per
 * reader or merge, never per record: tables without it keep their plain merge.
 */
export function foldsLowestLevelOnly(schema: TableSchema): boolean {
  const o = schema.options;
  return schema.isPrimaryKeyTable && (o.changelogProducer === 'lookup' || forceLookup(o.raw)) && o.mergeEngine !== 'first-row' && !deletionVectorsEnabled(o.raw);
}

/** Java's `force-lookup` option (CoreOptions.FORCE_LOOKUP, default false; Java tables only, see the header). */
export function forceLookup(raw: Readonly<Record<string, string>>): boolean {
  return (raw['force-lookup'] ?? 'false').trim().toLowerCase() === 'true';
}
