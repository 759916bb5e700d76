// Where a batch read starts by the table's own options, as Paimon's: with `scan.mode` default (or
// from-snapshot, from-snapshot-full, from-timestamp) a table whose options hold `scan.snapshot-id`,
// `scan.tag-name` or `scan.timestamp-millis` is read at that snapshot, tag or time by a batch read
// that names none (CoreOptions.startupMode; StaticFromSnapshot/Tag/TimestampStartingScanner).
// This store refuses those options at creation and ALTER, so only a table a Java engine altered
// holds them.
//
// Only readers that read as a Paimon engine would ask (`Table.batchReadPoint`: the CLI's scan and
// get): `Table.reader()` without a point stays the latest snapshot, which the site's own reads
// (the next id of a log, what a commit applies to) and every write path rely on.

import { invalidArgument, notSupported } from './errors.ts';
import type { ReadPoint } from './table.ts';

/** Options that change where (or what) Paimon's batch read reads, and that are not read here. */
const NOT_READ = ['scan.timestamp', 'scan.watermark', 'scan.version', 'scan.file-creation-time-millis', 'incremental-between', 'incremental-between-timestamp', 'incremental-to-auto-tag'];
/** `scan.mode` values whose batch read is the latest snapshot in full, or a point named below. */
const FULL_READ_MODES = new Set(['default', 'latest-full', 'latest', 'from-snapshot', 'from-snapshot-full', 'from-timestamp']);

/**
 * The read point a batch read without one takes by the table's options `raw`: {} (the latest)
 * unless they name a snapshot, tag or time. InvalidArgument for a value that is not one;
 * NotSupported naming the option for one that would make Paimon read elsewhere and is not read here.
 */
export function batchReadPointOf(raw: Readonly<Record<string, string>>): ReadPoint {
  const unread = NOT_READ.find((k) => raw[k] !== undefined);
  if (unread !== undefined) throw notSupported(`the table's option '${unread}' = '${raw[unread]}' (where a Paimon batch read starts) is not read here; give a snapshot id, tag or time to read at`);
  const mode = (raw['scan.mode'] ?? 'default').trim().toLowerCase();
  if (!FULL_READ_MODES.has(mode)) throw notSupported(`the table's option 'scan.mode' = '${raw['scan.mode']}' (what a Paimon batch read reads) is not read here; give a snapshot id, tag or time to read at`);
  // As CoreOptions.startupMode: in default mode a time comes before a snapshot id or tag.
  const ms = raw['scan.timestamp-millis'];
  if (ms !== undefined && (mode === 'default' || mode === 'from-timestamp')) return { timestampMs: whole('scan.timestamp-millis', ms, 'whole milliseconds since the epoch', Number.MIN_SAFE_INTEGER) };
  if (mode === 'default' || mode === 'from-snapshot' || mode === 'from-snapshot-full') {
    const id = raw['scan.snapshot-id'];
    if (id !== undefined) return { snapshotId: whole('scan.snapshot-id', id, 'a snapshot id ≥ 1', 1) };
    const tag = raw['scan.tag-name'];
    if (tag !== undefined) return { tag };
  }
  return {};
}

function whole(key: string, text: string, expected: string, min: number): number {
  const v = /^\s*-?\d+\s*$/.test(text) ? Number(text) : NaN;
  if (!Number.isSafeInteger(v) || v < min) throw invalidArgument(`the table's option '${key}': expected ${expected}, got '${text}'`);
  return v;
}
