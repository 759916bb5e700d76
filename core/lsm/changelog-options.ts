// Options of changelog producers and consumers (CoreOptions), parsed from a table's raw options.
// Kept apart from options.ts so the changelog work stays in its own files; options.ts only
// declares the names. See CHANGELOG-DESIGN.md.

import { invalidArgument, notSupported } from './errors.ts';
import { parseDuration, parseList, type TableOptions } from './options.ts';

export interface ChangelogOptions {
  producer: TableOptions['changelogProducer'];
  /** `changelog-producer.row-deduplicate`: no -U/+U pair when the value did not change. */
  rowDeduplicate: boolean;
  /** `changelog-producer.row-deduplicate-ignore-fields`: columns left out of that comparison. */
  rowDeduplicateIgnoreFields: string[];
  /** `consumer.expiration-time`: a consumer not updated for this long stops protecting snapshots. */
  consumerExpirationMs: number | undefined;
}

export function changelogOptions(o: TableOptions): ChangelogOptions {
  const raw = o.raw;
  const dedup = raw['changelog-producer.row-deduplicate'];
  let rowDeduplicate = false;
  if (dedup !== undefined) {
    const t = dedup.trim().toLowerCase();
    if (t !== 'true' && t !== 'false') throw invalidArgument(`option 'changelog-producer.row-deduplicate': expected 'true' or 'false', got '${dedup}'`);
    rowDeduplicate = t === 'true';
  }
  const exp = raw['consumer.expiration-time'];
  return {
    producer: o.changelogProducer,
    rowDeduplicate,
    rowDeduplicateIgnoreFields: parseList(raw['changelog-producer.row-deduplicate-ignore-fields']),
    consumerExpirationMs: exp === undefined ? undefined : parseDuration(exp, 'consumer.expiration-time'),
  };
}

/** Validation at schema construction: producers this store writes, and column names that exist. */
export function validateChangelogOptions(o: TableOptions, fieldIndex: ReadonlyMap<string, number>): void {
  if (o.changelogProducer === 'full-compaction' && o.numLevels < 3 && (o.raw['deletion-vectors.enabled'] ?? '').trim().toLowerCase() === 'true') {
    // dv-writer.ts rewrites level 1 at every commit; the top level must be a level only full compactions write.
    throw notSupported(`option 'changelog-producer': 'full-compaction' with deletion vectors needs 'num-levels' ≥ 3 (got ${o.numLevels}): level 1 is rewritten at every commit`);
  }
  const c = changelogOptions(o);
  for (const f of c.rowDeduplicateIgnoreFields) {
    if (!fieldIndex.has(f)) throw invalidArgument(`option 'changelog-producer.row-deduplicate-ignore-fields' names unknown column '${f}'`);
  }
  for (const k of ['changelog.num-retained.min', 'changelog.num-retained.max']) {
    const v = o.raw[k];
    if (v !== undefined && !/^\s*\d+\s*$/.test(v)) throw invalidArgument(`option '${k}': expected an integer, got '${v}'`);
  }
  if (o.raw['changelog.time-retained'] !== undefined) parseDuration(o.raw['changelog.time-retained'], 'changelog.time-retained');
}
