// Changelog producers (Paimon's `changelog-producer`), run inside the table writer.
//
//   input   Every row as written (+I/-U/+U/-D, before any merging) is kept per bucket and written
//           at each flush as `changelog-<uuid>-<n>.parquet` (level 0, same layout as a data file,
//           sorted by key then sequence number) next to the data files.
//   lookup  At each APPEND commit, for every key of the bucket's new level-0 files: the key's
//           merged value before the commit (the committed files) and after it (committed + new
//           files), folded by the table's own merge function exactly as a read folds them.
//           Before absent, after present: +I. Both present: -U(before), +U(after) — left out
//           when `changelog-producer.row-deduplicate` is set and the values are equal (minus
//           `…-ignore-fields`). Before present, after absent: -D(before).
//           The changelog comes from the commit itself, not from a compaction, so it does not
//           depend on compaction settings, write-only, or lookup-wait (paimon-features.md §7 #10).
//   full-compaction  When a full compaction of a bucket runs (every run into the top level:
//           `compact --full`, `full-compaction.delta-commits`, or the universal picker), the
//           bucket's old top level — its state at the previous full compaction, read without
//           deletion vectors — is merge-joined with the compaction's output: +I, -U/+U (row-
//           deduplicate applied), -D; nothing for a key whose only record was its old top-level
//           one (untouched since). The files are listed by the COMPACT snapshot.
//
// The files of one commit are listed in a changelog manifest (ADD entries) referenced from the
// snapshot's `changelogManifestList`; they are never in the base or delta lists, so batch reads
// never see them. Expiration keeps them while their snapshot (or a tag of it) is retained.
//
// Invariant: a changelog file is written before the snapshot that lists it, and only listed by
// the APPEND, COMPACT (full-compaction) or rollback OVERWRITE snapshot of the commit that produced it.

import { cell, runFromRecords, writeDataFile, type RunData } from './data-file.ts';
import { changelogOptions } from './changelog-options.ts';
import { isAdd, RowKind, type KeyValue } from './key-value.ts';
import { ADD, type DataFileMeta, type ManifestEntry } from './manifest.ts';
import { createMergeFunction, mergeOrder, type MergeFunction } from './merge/merge-function.ts';
import { findKey, mergeRuns } from './merge-reader.ts';
import { foldsLowestLevelOnly } from './merge/lookup-rule.ts';
import type { Snapshot } from './snapshot.ts';
import type { Table } from './table.ts';
import { valuesEqual } from './types.ts';

/** The part of the writer's bucket state the producers need. */
export interface ChangelogBucket {
  readonly partition: Uint8Array;
  readonly partitionPath: string;
  readonly bucket: number;
  /** Committed live files. */
  readonly files: readonly DataFileMeta[];
  /** Flushed level-0 files of the commit being made. */
  readonly pending: readonly DataFileMeta[];
}

/** Changes of one bucket, already as records (kind and full row), in output order. */
export interface BucketChanges {
  partition: Uint8Array;
  partitionPath: string;
  bucket: number;
  records: KeyValue[];
}

export class ChangelogWriter {
  private readonly input = new Map<ChangelogBucket, KeyValue[]>();
  private readonly flushed = new Map<ChangelogBucket, DataFileMeta[]>();
  private readonly producer: string;
  private readonly rowDeduplicate: boolean;
  private readonly compared: number[];

  constructor(
    private readonly table: Table,
    private readonly newFileName: () => string,
  ) {
    const schema = table.schema;
    const o = changelogOptions(schema.options);
    this.producer = o.producer;
    // first-row never changes a stored value: Paimon's lookup emits only +I for it.
    this.rowDeduplicate = o.rowDeduplicate || schema.options.mergeEngine === 'first-row';
    const ignored = new Set(o.rowDeduplicateIgnoreFields.map((f) => schema.fieldIndex.get(f)));
    this.compared = schema.fields.map((_, i) => i).filter((i) => !ignored.has(i));
  }

  get enabled(): boolean {
    return this.producer === 'input' || this.producer === 'lookup';
  }

  /** `input`: remembers a row as written. */
  onInput(b: ChangelogBucket, kv: KeyValue): void {
    if (this.producer !== 'input') return;
    let l = this.input.get(b);
    if (!l) this.input.set(b, (l = []));
    l.push({ key: kv.key, seq: kv.seq, kind: kv.kind, value: [...kv.value] });
  }

  /** `input`: writes the rows written since the last flush of this bucket as one changelog file. */
  onFlush(b: ChangelogBucket): void {
    const rows = this.input.get(b);
    if (this.producer !== 'input' || !rows || rows.length === 0) return;
    const cmp = this.table.compareKeys;
    rows.sort((x, y) => cmp(x.key, y.key) || x.seq - y.seq);
    const file = this.writeFile(b, rows);
    // Forgotten only once written: a failed write (a full disk) leaves them for the next flush.
    this.input.delete(b);
    let l = this.flushed.get(b);
    if (!l) this.flushed.set(b, (l = []));
    l.push(file);
  }

  /** The changelog entries of the APPEND commit being made (writes the lookup changelog now). */
  produce(buckets: Iterable<ChangelogBucket>): ManifestEntry[] {
    const out: ManifestEntry[] = [];
    if (this.producer === 'input') {
      for (const b of buckets) this.onFlush(b);
      for (const [b, files] of this.flushed) for (const f of files) out.push(this.entry(b, f));
    } else if (this.producer === 'lookup') {
      for (const b of buckets) {
        if (b.pending.length === 0) continue;
        const records = this.lookupChanges(b);
        if (records.length > 0) out.push(this.entry(b, this.writeFile(b, records)));
      }
    }
    return out;
  }

  /** Changelog entries for changes computed elsewhere (rollback as latest). */
  write(changes: Iterable<BucketChanges>): ManifestEntry[] {
    const out: ManifestEntry[] = [];
    for (const c of changes) if (c.records.length > 0) out.push(this.entry(c, this.writeFile(c, c.records)));
    return out;
  }

  /**
   * `input`: rows written and not yet listed by a snapshot. They need a snapshot even when the
   * write buffer folded them to nothing (no data file), as Paimon commits an APPEND snapshot for a
   * changelog-only increment (FileStoreCommitImpl: changelog files alone are not an empty commit).
   */
  get hasUncommitted(): boolean {
    return this.flushed.size > 0 || this.input.size > 0;
  }

  /** The commit that listed the produced files succeeded. */
  committed(): void {
    this.flushed.clear();
  }

  /** Paths of changelog files flushed but not yet committed (kept from an expiration sweep). */
  pendingPaths(): string[] {
    const out: string[] = [];
    for (const [b, files] of this.flushed) for (const f of files) out.push(`${this.table.paths.bucketDir(b.partitionPath, b.bucket)}/${f.fileName}`);
    return out;
  }

  /** Forgets everything not yet committed (the writer re-initializes). */
  discard(): void {
    this.input.clear();
    this.flushed.clear();
  }

  private entry(b: { partition: Uint8Array; bucket: number }, file: DataFileMeta): ManifestEntry {
    return { kind: ADD, partition: b.partition, bucket: b.bucket, totalBuckets: this.table.schema.options.bucket, file };
  }

  private writeFile(b: { partitionPath: string; bucket: number }, records: KeyValue[]): DataFileMeta {
    const schema = this.table.schema;
    return writeDataFile({
      fileIO: this.table.fileIO,
      schema,
      bucketDir: this.table.paths.bucketDir(b.partitionPath, b.bucket),
      fileName: this.newFileName(),
      run: runFromRecords(records, schema.keyIndexes.length, schema.fields.length),
      level: 0,
      fileSource: 0,
      creationTimeMs: this.table.clock(),
    });
  }

  /** `lookup`: before/after of every key in the bucket's pending files. */
  private lookupChanges(b: ChangelogBucket): KeyValue[] {
    const table = this.table;
    const schema = table.schema;
    const merge = createMergeFunction(schema);
    const order = mergeOrder(schema);
    const committedRuns = table.runsOf([...b.files]);
    const committed = lookupRuns(table, b.partition, b.bucket, committedRuns);
    const pending = lookupRuns(table, b.partition, b.bucket, table.runsOf([...b.pending]));
    // As reads fold the key (merge/lookup-rule.ts): its level-0 records and its lowest record above
    // level 0 — committed runs come newest first, so the first one above level 0 holding the key
    // ends the search. The pending files are level 0.
    const levels = foldsLowestLevelOnly(schema) ? committedRuns.map((r) => r.level) : undefined;
    const out: KeyValue[] = [];
    for (const key of distinctKeys(pending.map((r) => r.map((f) => f.run)), table.compareKeys)) {
      const older: KeyValue[] = [];
      for (let r = 0; r < committed.length; r++) {
        const kv = lookupInRun(committed[r]!, key, table.compareKeys);
        if (!kv) continue;
        older.push(kv);
        if (levels !== undefined && levels[r]! > 0) break;
      }
      const all = [...older];
      for (const run of pending) {
        const kv = lookupInRun(run, key, table.compareKeys);
        if (kv) all.push(kv);
      }
      const before = fold(merge, order, older);
      const after = fold(merge, order, all);
      const seq = after?.seq ?? all[all.length - 1]?.seq ?? 0;
      const beforeRow = before && isAdd(before.kind) ? before.value : undefined;
      const afterRow = after && isAdd(after.kind) ? after.value : undefined;
      this.pushChange(out, key, seq, beforeRow, afterRow);
    }
    return out;
  }

  /** `lookup` for deletion-vector tables (dv-writer.ts): records of keys whose before/after rows are known. */
  lookupRecords(changes: Iterable<{ key: unknown[]; seq: number; before: unknown[] | undefined; after: unknown[] | undefined }>): KeyValue[] {
    const out: KeyValue[] = [];
    for (const c of changes) this.pushChange(out, c.key, c.seq, c.before, c.after);
    return out;
  }

  /** True for `full-compaction`: full compactions of a bucket produce its changelog (table-writer.ts). */
  get atFullCompaction(): boolean {
    return this.producer === 'full-compaction';
  }

  /**
   * `full-compaction`: a merge-join of the bucket's old top level (`before`: ascending by key, at
   * most one record per key, read without deletion vectors) with the full compaction's merged
   * output, fed key by key to `add` (ascending, retractions included; `single`: the merge folded
   * one input record). `finish` returns the changes: +I, -U/+U (row-deduplicate applied), -D. A
   * retraction on either side means absent. A key whose only input was its old top-level record
   * (same sequence number) is untouched since the previous full compaction and gives nothing, as in
   * Paimon's `FullChangelogMergeFunctionWrapper`; a key with newer records gives -U/+U even when
   * the rows are equal, unless row-deduplicate.
   */
  fullCompactionDiff(before: Iterable<KeyValue>): { add(after: KeyValue, single: boolean): void; finish(): KeyValue[] } {
    const cmp = this.table.compareKeys;
    const it = before[Symbol.iterator]();
    let cur = it.next();
    const out: KeyValue[] = [];
    const row = (kv: KeyValue | undefined) => (kv && isAdd(kv.kind) ? kv.value : undefined);
    return {
      add: (after, single) => {
        while (!cur.done && cmp(cur.value.key, after.key) < 0) {
          this.pushChange(out, cur.value.key, cur.value.seq, row(cur.value), undefined);
          cur = it.next();
        }
        let b: KeyValue | undefined;
        if (!cur.done && cmp(cur.value.key, after.key) === 0) {
          b = cur.value;
          cur = it.next();
        }
        // With deletion vectors a marked top-level row is not an input: the single record is then newer.
        if (single && b?.seq === after.seq) return;
        this.pushChange(out, after.key, after.seq, row(b), row(after));
      },
      finish: () => {
        for (; !cur.done; cur = it.next()) this.pushChange(out, cur.value.key, cur.value.seq, row(cur.value), undefined);
        return out;
      },
    };
  }

  /** +I (new key), -U/+U (changed; none when row-deduplicate finds it equal), -D (removed key). */
  private pushChange(out: KeyValue[], key: unknown[], seq: number, beforeRow: unknown[] | undefined, afterRow: unknown[] | undefined): void {
    if (beforeRow === undefined && afterRow !== undefined) out.push({ key, seq, kind: RowKind.INSERT, value: afterRow });
    else if (beforeRow !== undefined && afterRow === undefined) out.push({ key, seq, kind: RowKind.DELETE, value: beforeRow });
    else if (beforeRow !== undefined && afterRow !== undefined) {
      if (this.rowDeduplicate && this.compared.every((i) => valuesEqual(beforeRow[i], afterRow[i]))) return;
      out.push({ key, seq, kind: RowKind.UPDATE_BEFORE, value: beforeRow });
      out.push({ key, seq, kind: RowKind.UPDATE_AFTER, value: afterRow });
    }
  }
}

interface LookupPart {
  run: RunData;
  min: unknown[];
  max: unknown[];
}

/** The bucket's sorted runs, newest first, each a list of files with decoded key ranges. */
function lookupRuns(table: Table, partition: Uint8Array, bucket: number, runs: ReturnType<Table['runsOf']>): LookupPart[][] {
  return runs.map((r) => r.files.map((meta) => ({ run: table.loadRun(partition, bucket, meta), ...table.keyRange(meta) })));
}

function lookupInRun(run: LookupPart[], key: unknown[], cmp: (a: unknown[], b: unknown[]) => number): KeyValue | undefined {
  for (const p of run) {
    if (cmp(key, p.min) < 0 || cmp(key, p.max) > 0) continue;
    const i = findKey(p.run, key, cmp);
    if (i < 0) return undefined;
    const d = p.run;
    const k = new Array(d.keyCols.length);
    for (let c = 0; c < k.length; c++) k[c] = d.keyCols[c]![i];
    const v = new Array(d.valueCols.length);
    for (let c = 0; c < v.length; c++) v[c] = cell(d.valueCols[c]!, i);
    return { key: k, seq: d.seq[i]!, kind: d.kind[i] as KeyValue['kind'], value: v };
  }
  return undefined;
}

/** Folds the records of one key (one per run, any order) as reads do; undefined when none. */
export function fold(merge: MergeFunction, order: (a: KeyValue, b: KeyValue) => number, records: KeyValue[]): KeyValue | undefined {
  if (records.length === 0) return undefined;
  const sorted = [...records].sort(order);
  merge.reset();
  for (const kv of sorted) merge.add(kv);
  return merge.result();
}

/** The distinct keys of some sorted runs, ascending. */
function distinctKeys(runs: RunData[][], compareKeys: (a: unknown[], b: unknown[]) => number): unknown[][] {
  let last: KeyValue | undefined;
  const keep: MergeFunction = {
    reset: () => (last = undefined),
    add: (kv) => (last = kv),
    result: () => last,
  };
  const keys: unknown[][] = [];
  for (const kv of mergeRuns(runs, compareKeys, keep, (a, b) => a.seq - b.seq)) keys.push(kv.key);
  return keys;
}

// ---------------------------------------------------------------------------------------------
// Reading the changelog of a snapshot.

/** The changelog file entries a snapshot lists (none when it has no changelog manifest list). */
export function changelogEntries(table: Table, s: Snapshot): ManifestEntry[] {
  if (!s.changelogManifestList) return [];
  const out: ManifestEntry[] = [];
  for (const m of table.manifests.readList(s.changelogManifestList, s.changelogManifestListSize)) for (const e of table.manifests.readManifest(m)) out.push(e);
  return out;
}

/** Names of the changelog manifests a snapshot lists (its list itself is in `referencedNames`). */
export function changelogManifestNames(table: Table, s: Snapshot): string[] {
  if (!s.changelogManifestList) return [];
  return table.manifests.readList(s.changelogManifestList, s.changelogManifestListSize).map((m) => m.fileName);
}
