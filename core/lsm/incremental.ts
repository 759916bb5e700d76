// Reading what changed between two snapshots (Paimon's `incremental-between` with its scan
// modes) and following a table snapshot by snapshot under a named consumer.
//
// Modes, for snapshots (from, to] — start exclusive, end inclusive; ids or tag names:
//   delta      per APPEND snapshot in range, the files it added, merged per bucket with the
//              table's merge engine; retractions kept, row kinds as merged. (Paimon's delta scan
//              does not merge: it reads each added record as written; CHANGELOG-DESIGN.md.)
//   changelog  per snapshot in range, the rows of the changelog files it lists, in order.
//              InvalidArgument when the table has no changelog producer.
//   diff       the two table states compared per key: +I, -U/+U, -D. Needs only the two states
//              (a tag is enough), not the snapshots in between.
//   auto       changelog when the table has a producer, else delta.
//
// A follower (`ChangeFollower`) reads one snapshot at a time, never blocks and starts no timer:
// the caller polls `next()` (e.g. after each of its commits, or every second). Progress is stored
// in `consumer/consumer-<id>` as the first snapshot not yet acknowledged; `next()` acknowledges the
// batch it returned before, `ack()` does it at once. A batch returned but not acknowledged is
// delivered again after a restart (at least once); acknowledged batches never are.

import { cell, type RunData, type RunParts } from './data-file.ts';
import { changelogEntries } from './changelog.ts';
import { deletionVectorsEnabled, snapshotDeletionVectors, withoutDeleted, type SnapshotDeletionVectors } from './deletion-vector.ts';
import { readConsumer, writeConsumer, checkConsumerId } from './consumer.ts';
import { invalidArgument, LsmError, nameReadState, notFound } from './errors.ts';
import { isAdd, RowKind, ROW_KIND_TEXT, type KeyValue, type RowKindText } from './key-value.ts';
import { groupByBucket, lastFullCompactionLevel, type BucketFiles } from './levels.ts';
import { ADD, type DataFileMeta, type ManifestEntry } from './manifest.ts';
import { foldsLowestLevelOnly } from './merge/lookup-rule.ts';
import { createMergeFunction, mergeOrder } from './merge/merge-function.ts';
import { mergeRuns } from './merge-reader.ts';
import type { Snapshot } from './snapshot.ts';
import type { Table } from './table.ts';
import { valuesEqual } from './types.ts';

export type ChangeKind = RowKindText;
export interface Change {
  kind: ChangeKind;
  /**
   * Every column, in memory form, in the table's latest schema — for every mode and both states of
   * a diff (files of older schemas mapped by field id), as Paimon's incremental reads use the
   * table's schema. Unlike a reader at a snapshot, tag or time, which reads in the snapshot's own
   * (EVOLUTION-DESIGN.md §1): one set of columns for changes that span an ALTER.
   */
  row: unknown[];
}
export type ChangesMode = 'auto' | 'delta' | 'changelog' | 'diff';
/** A snapshot id, or a tag name (a string of digits that names no tag is taken as an id). 0 = before the first snapshot. */
export type SnapshotRef = number | string;

export interface ChangesOptions {
  from: SnapshotRef;
  /** Default: the latest snapshot. */
  to?: SnapshotRef;
  mode?: ChangesMode;
}

interface Resolved {
  id: number;
  /** The state at that point, when it is still readable (a retained snapshot or a tag). */
  snapshot: Snapshot | undefined;
  label: string;
}

function resolveRef(table: Table, ref: SnapshotRef, what: string): Resolved {
  if (typeof ref === 'number') {
    if (!Number.isSafeInteger(ref) || ref < 0) throw invalidArgument(`${what}: expected a snapshot id ≥ 0 or a tag name, got ${ref}`);
    return { id: ref, snapshot: ref === 0 ? undefined : table.snapshots.tryGet(ref), label: `snapshot ${ref}` };
  }
  if (typeof ref !== 'string' || ref.length === 0) throw invalidArgument(`${what}: expected a snapshot id or a tag name`);
  if (table.tags.exists(ref)) {
    const t = table.tags.get(ref);
    return { id: t.snapshot.id, snapshot: t.snapshot, label: `tag '${ref}' (snapshot ${t.snapshot.id})` };
  }
  if (/^\d+$/.test(ref)) return resolveRef(table, Number(ref), what);
  throw notFound(`${what}: tag '${ref}' does not exist`);
}

function effectiveMode(table: Table, mode: ChangesMode): Exclude<ChangesMode, 'auto'> {
  const producer = table.schema.options.changelogProducer;
  if (mode === 'auto') return producer === 'none' ? 'delta' : 'changelog';
  if (mode === 'changelog' && producer === 'none') {
    throw invalidArgument(`table ${table.name} has no changelog producer ('changelog-producer' is 'none'); read mode 'delta' or 'diff' instead`);
  }
  if (!['delta', 'changelog', 'diff'].includes(mode)) throw invalidArgument(`unknown mode '${String(mode)}', expected auto, delta, changelog or diff`);
  return mode;
}

/** The changes between two points; lazily, pinning what it reads until it is done. */
export function* readChanges(table: Table, o: ChangesOptions): Generator<Change> {
  const mode = effectiveMode(table, o.mode ?? 'auto');
  const from = resolveRef(table, o.from, 'from');
  const to = o.to === undefined ? latestRef(table) : resolveRef(table, o.to, 'to');
  if (from.id > to.id) throw invalidArgument(`from (${from.label}) is after to (${to.label})`);
  if (mode === 'diff') {
    for (const r of [from, to]) {
      if (r.id !== 0 && r.snapshot === undefined) throw notFound(`${r.label} has expired; diff needs both states (use a tag to keep one)`);
    }
    // Both states are pinned as they were resolved: a tag's snapshot, expired or not, keeps its
    // files while this reads even if the tag expires meanwhile (a pin below EARLIEST holds no
    // snapshot back, expire.ts).
    const releases = [from, to].filter((r) => r.snapshot !== undefined).map((r) => table.pinSnapshot(r.snapshot!));
    try {
      for (const b of diffBuckets(table, from.snapshot, to.snapshot)) for (const kv of b.records) yield toChange(kv);
    } catch (e) {
      throw nameReadState(e, () => `the diff of ${from.label} and ${to.label}`);
    } finally {
      for (const release of releases) release();
    }
    return;
  }
  if (from.id === to.id) return;
  // A delta of a table with deletion vectors is a change from the state before each snapshot
  // (deltaFromPrevious): the state at `from` is needed too — a retained snapshot or a tag's.
  const fromPrevious = mode === 'delta' && deltaFromPrevious(table) && from.id > 0;
  if (fromPrevious && from.snapshot === undefined) {
    throw notFound(
      `${from.label} of ${table.name} has expired (retained: ${table.snapshots.earliestId() ?? 'none'}..${table.snapshots.latestId() ?? 'none'}); ` +
        `a delta of a table with deletion vectors is the change from the state at its start — use mode 'diff' between tags instead`,
    );
  }
  // Pinning the first snapshot of the range keeps it and every later one (none when it has
  // expired already: the check below then fails).
  const first = table.snapshots.tryGet(from.id + 1);
  const releases = [first ? table.pinSnapshot(first) : () => {}, fromPrevious ? table.pinSnapshot(from.snapshot!) : () => {}];
  try {
    // Check the whole range first: a partial answer would look like a complete one.
    const snaps: Snapshot[] = [];
    for (let id = from.id + 1; id <= to.id; id++) {
      const s = table.snapshots.tryGet(id);
      if (!s) {
        throw notFound(
          `snapshot ${id} of ${table.name} has expired (retained: ${table.snapshots.earliestId() ?? 'none'}..${table.snapshots.latestId() ?? 'none'}); ` +
            `${mode} reads need every snapshot in (${from.id}, ${to.id}] — use mode 'diff' between tags instead`,
        );
      }
      snaps.push(s);
    }
    for (const s of snaps) yield* snapshotChanges(table, s, mode, false, s.id === from.id + 1 ? from.snapshot : undefined);
  } finally {
    for (const release of releases) release();
  }
}

function latestRef(table: Table): Resolved {
  const s = table.snapshots.latest();
  return { id: s?.id ?? 0, snapshot: s, label: s ? `snapshot ${s.id}` : 'the empty table' };
}

function toChange(kv: KeyValue): Change {
  return { kind: ROW_KIND_TEXT[kv.kind], row: kv.value };
}

/**
 * Whether a `delta` read of this table is each APPEND snapshot's change from the state before it
 * (the `diff` of the two), not the records of the files it adds: a primary-key table with
 * deletion vectors. Its commits merge level 0 into the level-1 run before the snapshot
 * (dv-writer.ts), so the files a snapshot adds hold every row of the rewritten run — keys the
 * commit never wrote, read as new again — and a delete is only a mark in a vector, in no file.
 * Read as files, a follower got each such row again at every commit and no delete at all.
 */
export function deltaFromPrevious(table: Table): boolean {
  return table.schema.isPrimaryKeyTable && deletionVectorsEnabled(table.schema.options.raw);
}

/**
 * The changes one snapshot made, in `delta` or `changelog` mode. `orState`: where a delta needs the
 * previous snapshot (deltaFromPrevious) and it has expired, the snapshot's whole state as +I rows
 * (a follower starting at the earliest snapshot of a table whose history expired) instead of NotFound.
 * `previous`: the state before `s` when the caller has it (a tag's snapshot, expired or not).
 */
export function* snapshotChanges(table: Table, s: Snapshot, mode: 'delta' | 'changelog', orState = false, previous?: Snapshot): Generator<Change> {
  try {
    yield* changesOfSnapshot(table, s, mode, orState, previous);
  } catch (e) {
    // A stored value that does not cast to today's columns: the error names the snapshot too.
    throw nameReadState(e, () => `the ${mode} of snapshot ${s.id}`);
  }
}

function* changesOfSnapshot(table: Table, s: Snapshot, mode: 'delta' | 'changelog', orState: boolean, previous: Snapshot | undefined): Generator<Change> {
  if (mode === 'changelog') {
    // bucket ≥ 0: a postpone table's 'bucket-postpone' files are read once its compaction has
    // moved them into real buckets (AbstractBatchTableScan, DataTableStreamScan: onlyReadRealBuckets).
    const entries = changelogEntries(table, s).filter((e) => e.kind === ADD && e.bucket >= 0);
    entries.sort((a, b) => Buffer.compare(Buffer.from(a.partition), Buffer.from(b.partition)) || a.bucket - b.bucket || a.file.minSequenceNumber - b.file.minSequenceNumber);
    for (const e of entries) {
      const d = table.loadRun(e.partition, e.bucket, e.file);
      for (let i = 0; i < d.rowCount; i++) {
        const row = new Array(d.valueCols.length);
        for (let c = 0; c < row.length; c++) row[c] = cell(d.valueCols[c]!, i);
        yield { kind: ROW_KIND_TEXT[d.kind[i]!]!, row };
      }
    }
    return;
  }
  if (s.commitKind !== 'APPEND') return;
  const added: ManifestEntry[] = [];
  for (const m of table.manifests.readList(s.deltaManifestList, s.deltaManifestListSize)) for (const e of table.manifests.readManifest(m)) if (e.kind === ADD && e.bucket >= 0) added.push(e);
  const schema = table.schema;
  if (!schema.isPrimaryKeyTable) {
    // Append tables: the added rows in write order, minus the positions the snapshot's deletion
    // vectors mark (Paimon attaches the reading snapshot's deletion files to a delta split). A
    // later DELETE is not a change of this mode: append tables stream inserts only.
    const dvs = snapshotDeletionVectors(table, s);
    for (const b of groupByBucket(added)) {
      for (const f of [...b.files].sort((x, y) => x.minSequenceNumber - y.minSequenceNumber)) {
        for (const row of liveRows(table, b, f, dvs)) yield { kind: '+I', row };
      }
    }
    return;
  }
  if (deltaFromPrevious(table)) {
    const prev = previous ?? (s.id > 1 ? table.snapshots.tryGet(s.id - 1) : undefined);
    if (s.id > 1 && !prev && !orState) {
      throw notFound(
        `snapshot ${s.id - 1} of ${table.name} has expired (retained: ${table.snapshots.earliestId() ?? 'none'}..${table.snapshots.latestId() ?? 'none'}); ` +
          `a delta of snapshot ${s.id} of a table with deletion vectors is its change from snapshot ${s.id - 1} — use mode 'diff' between tags instead`,
      );
    }
    for (const b of diffBuckets(table, prev, s, { changedOnly: true })) for (const kv of b.records) yield toChange(kv);
    return;
  }
  const merge = createMergeFunction(schema);
  const order = mergeOrder(schema);
  for (const b of groupByBucket(added)) {
    const runs = table.runsOf(b.files).map((r): RunParts => ({ length: r.files.length, load: (i) => table.loadRun(b.partition, b.bucket, r.files[i]!) }));
    for (const kv of mergeRuns(runs, table.compareKeys, merge, order)) yield toChange(kv);
  }
}

/**
 * Merged live rows of one bucket of a state, ascending by key (retractions dropped). A
 * deletion-vector table's state is what its reader sees: level ≥ 1 minus the vectors (`dvs`).
 */
function* bucketRows(table: Table, b: BucketFiles | undefined, dvs: SnapshotDeletionVectors | undefined, level?: number): Generator<KeyValue> {
  if (!b) return;
  const schema = table.schema;
  // The state at the bucket's last full compaction: its top level, or below it after an ALTER raised the levels.
  const top = level === undefined ? undefined : lastFullCompactionLevel(level + 1, b.files, schema.isPrimaryKeyTable && deletionVectorsEnabled(schema.options.raw));
  const files = top !== undefined ? b.files.filter((f) => f.level === top) : dvs ? b.files.filter((f) => f.level > 0) : b.files;
  // Each file decoded when the merge reaches it (RunParts): a diff holds one file per run of each state.
  const load = (f: DataFileMeta): RunData => (dvs ? withoutDeleted(table.loadRun(b.partition, b.bucket, f), dvs.deleted(b.partition, b.bucket, f.fileName)) : table.loadRun(b.partition, b.bucket, f));
  const sorted = table.runsOf(files);
  const runs = sorted.map((r): RunParts => ({ length: r.files.length, load: (i) => load(r.files[i]!) }));
  // A lookup table's state is what its reader gives: level 0 and the lowest level above it per key (merge/lookup-rule.ts).
  const levels = foldsLowestLevelOnly(schema) ? sorted.map((r) => r.level) : undefined;
  // `lone`: a key's one record as the scan reads it (as it came; a retraction no row; folded in a
  // lookup table), so a diff is the difference of the two scans.
  for (const kv of mergeRuns(runs, table.compareKeys, createMergeFunction(schema), mergeOrder(schema), undefined, levels, levels === undefined)) if (isAdd(kv.kind)) yield kv;
}

/** The rows of an append-table file minus the positions deleted in `dvs`. */
function* liveRows(table: Table, b: { partition: Uint8Array; bucket: number }, f: DataFileMeta, dvs: SnapshotDeletionVectors | undefined): Generator<unknown[]> {
  const d = table.loadRun(b.partition, b.bucket, f);
  const deleted = dvs?.deleted(b.partition, b.bucket, f.fileName);
  for (let i = 0; i < d.rowCount; i++) {
    if (deleted?.has(i)) continue;
    const row = new Array(d.valueCols.length);
    for (let c = 0; c < row.length; c++) row[c] = cell(d.valueCols[c]!, i);
    yield row;
  }
}

/**
 * Append tables have no key: the diff of two states of a bucket is the difference of the two
 * multisets of live rows (minus deletion vectors): -D for each row of `from` that `to` has fewer
 * times, then +I for each row of `to` that `from` has fewer times, each in write order.
 */
function appendDiff(table: Table, a: BucketFiles | undefined, b: BucketFiles | undefined, from: Snapshot | undefined, to: Snapshot | undefined): KeyValue[] {
  const n = table.schema.fields.length;
  const rowsOf = (x: BucketFiles | undefined, s: Snapshot | undefined): unknown[][] => {
    if (!x || !s) return [];
    const dvs = snapshotDeletionVectors(table, s);
    const out: unknown[][] = [];
    for (const f of [...x.files].sort((p, q) => p.minSequenceNumber - q.minSequenceNumber)) for (const row of liveRows(table, x, f, dvs)) out.push(row);
    return out;
  };
  // Rows grouped by a coarse text; equality inside a group is `valuesEqual` on every column.
  const coarse = (row: unknown[]) => row.map((v) => (v instanceof Uint8Array ? Buffer.from(v).toString('hex') : typeof v === 'object' && v !== null ? '' : String(v))).join('\u0000');
  const same = (x: unknown[], y: unknown[]) => {
    for (let i = 0; i < n; i++) if (!valuesEqual(x[i], y[i])) return false;
    return true;
  };
  const pool = new Map<string, unknown[][]>();
  const toRows = rowsOf(b, to);
  for (const row of toRows) {
    const k = coarse(row);
    let l = pool.get(k);
    if (!l) pool.set(k, (l = []));
    l.push(row);
  }
  const matched = new Set<unknown[]>();
  const out: KeyValue[] = [];
  for (const row of rowsOf(a, from)) {
    const l = pool.get(coarse(row));
    const i = l ? l.findIndex((r) => !matched.has(r) && same(r, row)) : -1;
    if (i >= 0) matched.add(l![i]!);
    else out.push({ key: [], seq: 0, kind: RowKind.DELETE, value: row });
  }
  for (const row of toRows) if (!matched.has(row)) out.push({ key: [], seq: 0, kind: RowKind.INSERT, value: row });
  return out;
}

/** Whether a bucket holds the same files (names and levels) in two states, with the same deleted positions. */
function sameBucketState(a: BucketFiles, b: BucketFiles, da: SnapshotDeletionVectors | undefined, db: SnapshotDeletionVectors | undefined): boolean {
  if (a.files.length !== b.files.length) return false;
  const levels = new Map(a.files.map((f) => [f.fileName, f.level]));
  for (const f of b.files) {
    if (levels.get(f.fileName) !== f.level) return false;
    const x = da?.deleted(a.partition, a.bucket, f.fileName);
    const y = db?.deleted(b.partition, b.bucket, f.fileName);
    if (x === y) continue;
    if ((x?.size ?? 0) !== (y?.size ?? 0)) return false;
    for (const p of x ?? []) if (!y!.has(p)) return false;
  }
  return true;
}

/**
 * Per bucket, the changes that turn state `from` into state `to` (undefined = empty table).
 * With `level` (the top level), the states are the files of the level holding each bucket's
 * last full compaction (levels.ts `lastFullCompactionLevel`: the top, a higher one where a
 * bucket's files sit higher, a lower one where an ALTER raised the levels since), read without
 * deletion vectors — the states the `full-compaction` producer's changelog reports.
 */
export function* diffBuckets(
  table: Table,
  from: Snapshot | undefined,
  to: Snapshot | undefined,
  o: { level?: number; changedOnly?: boolean } = {},
): Generator<{ partition: Uint8Array; partitionPath: string; bucket: number; records: KeyValue[] }> {
  const id = (b: BucketFiles) => `${Buffer.from(b.partition).toString('hex')}/${String(b.bucket).padStart(10, '0')}`;
  const pairs = new Map<string, { a?: BucketFiles; b?: BucketFiles }>();
  for (const b of from ? table.readBuckets(from) : []) pairs.set(id(b), { a: b });
  for (const b of to ? table.readBuckets(to) : []) pairs.set(id(b), { ...pairs.get(id(b)), b });
  const cmp = table.compareKeys;
  const n = table.schema.fields.length;
  const dv = o.level === undefined && table.schema.isPrimaryKeyTable && deletionVectorsEnabled(table.schema.options.raw);
  const dvsOf = (s: Snapshot | undefined) => (dv && s ? snapshotDeletionVectors(table, s) : undefined);
  for (const k of [...pairs.keys()].sort()) {
    const { a, b } = pairs.get(k)!;
    const any = (a ?? b)!;
    if (!table.schema.isPrimaryKeyTable) {
      yield { partition: any.partition, partitionPath: table.partitionPathOf(any.partition), bucket: any.bucket, records: appendDiff(table, a, b, from, to) };
      continue;
    }
    // `changedOnly`: a bucket with the same files and vectors in both states is not read.
    if (o.changedOnly && a && b && sameBucketState(a, b, dvsOf(from), dvsOf(to))) continue;
    const records: KeyValue[] = [];
    const ia = bucketRows(table, a, dvsOf(from), o.level);
    const ib = bucketRows(table, b, dvsOf(to), o.level);
    let x = ia.next();
    let y = ib.next();
    while (!x.done || !y.done) {
      const c = x.done ? 1 : y.done ? -1 : cmp(x.value.key, y.value.key);
      if (c < 0) {
        records.push({ ...x.value, kind: RowKind.DELETE });
        x = ia.next();
      } else if (c > 0) {
        records.push({ ...y.value, kind: RowKind.INSERT });
        y = ib.next();
      } else {
        let same = true;
        for (let i = 0; i < n && same; i++) same = valuesEqual(x.value.value[i], y.value.value[i]);
        if (!same) {
          records.push({ ...x.value, seq: y.value.seq, kind: RowKind.UPDATE_BEFORE });
          records.push({ ...y.value, kind: RowKind.UPDATE_AFTER });
        }
        x = ia.next();
        y = ib.next();
      }
    }
    yield { partition: any.partition, partitionPath: table.partitionPathOf(any.partition), bucket: any.bucket, records };
  }
}

// ---------------------------------------------------------------------------------------------
// Following a table.

export interface FollowOptions {
  /** The consumer id: progress lives in `consumer/consumer-<id>`. */
  consumer: string;
  /**
   * Where a consumer without a stored position starts: a snapshot id (its changes are the first
   * read), 'earliest' (the earliest retained snapshot, the default) or 'latest' (only changes
   * committed from now on). Ignored when the consumer has a position.
   */
  from?: number | 'latest' | 'earliest';
  /** 'auto' (default), 'delta' or 'changelog'. */
  mode?: 'auto' | 'delta' | 'changelog';
}

export class ChangeFollower {
  readonly consumer: string;
  private readonly mode: 'delta' | 'changelog';
  /** Next snapshot to read. */
  private position: number;
  /** Position stored in the consumer file. */
  private acked: number;
  /** The snapshot of the batch `next` returned last, until it is acknowledged (`followRollback`). */
  private delivered: Snapshot | undefined;

  constructor(
    private readonly table: Table,
    o: FollowOptions,
  ) {
    checkConsumerId(o.consumer);
    this.consumer = o.consumer;
    const m = effectiveMode(table, o.mode ?? 'auto');
    if (m === 'diff') throw invalidArgument("a follower reads 'auto', 'delta' or 'changelog'; use changes() for a diff");
    this.mode = m;
    const stored = readConsumer(table, o.consumer);
    if (stored !== undefined) {
      this.position = stored;
    } else {
      const from = o.from ?? 'earliest';
      if (from === 'latest') this.position = (table.snapshots.latestId() ?? 0) + 1;
      else if (from === 'earliest') this.position = table.snapshots.earliestId() ?? 1;
      else {
        if (!Number.isSafeInteger(from) || from < 1) throw invalidArgument(`follow from: expected a snapshot id ≥ 1, 'earliest' or 'latest', got ${String(from)}`);
        this.position = from;
      }
      // Register at once, so the start point is protected from expiration from now on.
      writeConsumer(table, o.consumer, this.position);
    }
    this.acked = this.position;
    this.checkRetained();
  }

  /** The first snapshot this follower has not returned yet. */
  get nextSnapshot(): number {
    return this.position;
  }

  private checkRetained(): void {
    const latest = this.table.snapshots.latestId() ?? 0;
    if (this.position > latest) return;
    if (!this.table.snapshots.exists(this.position)) {
      throw notFound(
        `consumer '${this.consumer}' of ${this.table.name} needs snapshot ${this.position}, which has expired ` +
          `(retained: ${this.table.snapshots.earliestId() ?? 'none'}..${latest}); reset the consumer to continue with a gap`,
      );
    }
  }

  /**
   * Acknowledges the previous batch, then returns the changes of the next snapshot that has any
   * (skipping, and acknowledging, snapshots without changes), or undefined when caught up.
   */
  next(): Change[] | undefined {
    this.ack();
    const latest = this.table.snapshots.latestId() ?? 0;
    while (this.position <= latest) {
      const s = this.table.snapshots.tryGet(this.position);
      if (!s) {
        this.checkRetained();
        throw new LsmError('NotFound', `snapshot ${this.position} of ${this.table.name} vanished while following`);
      }
      // A table with deletion vectors: the consumer keeps the snapshot before its position
      // (expire.ts), so only a follower started at the earliest snapshot of an expired history
      // finds it gone — and gets that snapshot's state to start from.
      const changes = [...snapshotChanges(this.table, s, this.mode, true)];
      this.position++;
      if (changes.length > 0) {
        this.delivered = s;
        return changes;
      }
    }
    this.store();
    return undefined;
  }

  /** Stores the position: everything returned so far has been processed. */
  ack(): void {
    this.followRollback();
    this.store();
  }

  private store(): void {
    if (this.acked === this.position) return;
    writeConsumer(this.table, this.consumer, this.position);
    this.acked = this.position;
    this.delivered = undefined;
  }

  /**
   * A destructive rollback, here or in another process, gives the ids after its target new content
   * and moves a consumer past target+1 back to it (rollback.ts). Stored over that, this follower's
   * own position skipped the new snapshots up to it. So before it stores, it takes the rollback in:
   * a stored position below the one it wrote is the rollback's, and a returned batch whose
   * snapshot is past the latest or holds other content now was rolled away (the consumer, at or
   * before target+1, was left as it is) — the follower goes back to its acknowledged position and
   * delivers that batch again, as for a batch a dead process never acknowledged. The snapshots it
   * read are dropped from the caches of this process (`invalidate`): their ids hold other content.
   * Changes it delivered from the rolled-away snapshots are not taken back (nor are they by Paimon,
   * whose rollback leaves consumers as they are). Costs a read of the consumer file per ack, and of
   * one snapshot file while a batch is out.
   */
  private followRollback(): void {
    const stored = readConsumer(this.table, this.consumer);
    let back: number | undefined;
    if (stored !== undefined && stored < this.acked) back = stored;
    else if (this.delivered !== undefined && this.position > this.acked && this.rolledAway(this.delivered)) back = this.acked;
    if (back === undefined) return;
    this.table.snapshots.invalidate();
    this.position = back;
    this.acked = back;
    this.delivered = undefined;
  }

  /** Whether snapshot `s`, read by this follower, is gone by a rollback: past the latest, or its id holds other content (not: expired). */
  private rolledAway(s: Snapshot): boolean {
    if (s.id > (this.table.snapshots.latestId() ?? 0)) return true;
    return s.id >= (this.table.snapshots.earliestId() ?? 0) && !this.table.snapshots.isRetained(s);
  }
}
