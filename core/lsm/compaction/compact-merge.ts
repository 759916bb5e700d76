// Compaction's k-way merge of sorted runs, written straight into output columns.
//
// It yields the records mergeRuns (merge-reader.ts) yields, in the same order, folded by the same
// merge function, a key's lone record excepted (below): the same linear scan for the smallest key
// (first cursor wins; the cursors holding it are gathered in the same pass), the same group of
// one record per run holding that key (in run order), the same stable sort by the merge order (an
// insertion sort: no work array per key), the same reset/add/result and the same per-key callback
// for every key it folds. What differs is the memory: mergeRuns builds a fresh KeyValue (key
// array, row array) for every input record, and compaction then copies every merged record into a
// run; here each run has one KeyValue whose key and row are refilled in place from its columns,
// and the merged record goes to a sink that must copy what it keeps before returning
// (compaction's sink: run-builder.ts, straight into packed columns). At 5 runs in and 1 out that
// is 15 short-lived objects per output row fewer for the scavenger.
//
// Invariant the reuse depends on: a merge function holds input records only between reset() and
// result() (every engine in merge/ does), and the sink runs before any cursor advances again.
//
// With `older` (a lookup table's compaction, lookup-levels.ts) the key's records in the runs the
// compaction leaves out join the group before the fold, and a fold that is the first of them (the
// newest older record) is not passed on: it stands where it is.
//
// With `levels` (tables that fold a key's lowest record above level 0 only, merge/lookup-rule.ts)
// the group is cut as Java's LookupMergeFunction cuts it: the level-0 records and the record of
// the lowest level above 0 are folded, the key's records in higher levels dropped (stale). Only
// when the unit holds no record of the key above level 0 is `older` asked, and only its first
// record (the lowest older level) joins — LookupChangelogMergeFunctionWrapper's lookup.
//
// A key's lone record — its only record in the runs merged, no older record joined — is written
// as it is, unfolded, as Java's MergeTreeCompactRewriter writes it (ReducerMergeFunctionWrapper;
// merge/README.md, "A key's lone record"); a lone retraction is then dropped by the sink when the
// output drops deletes (table-writer.ts), as Java's DropDeleteReader drops it. For most engines
// the fold of one add is the add itself; not for `collect`/`listagg` with `distinct` or a blank
// `listagg` input in aggregation, nor for partial-update's groups whose sequence is null (the
// fold nulls them), nor for an aggregation retraction (its fold is a row, `sum` -x, that reads
// where the retraction read as none). Not with `levels` when a run is at level 0: Java's lookup
// compaction of level 0 (LookupChangelogMergeFunctionWrapper) folds every key, lone ones too.
// `onKeyMerged` is called after folds only (a lone record has no fold to check).

import { BoolColumn, decodedParts, Int32BigIntColumn, PackedColumn, PartCursor, type BigInt64Column, type Float64Column, type Int32Column, type RunData, type RunParts } from '../data-file.ts';
import type { KeyValue, RowKind } from '../key-value.ts';
import type { MergeFunction } from '../merge/merge-function.ts';
import type { Comparator } from '../types.ts';

/** Copies row i of a run part into `out` (every table column, schema order), as rowReader reads it. */
type RowFill = (i: number, out: unknown[]) => void;

const fills = new WeakMap<RunData, RowFill>();

/**
 * A function filling a row from the run's columns, compiled once per run from its column forms
 * (direct element loads, as data-file.ts's rowReader does, but into a caller's array).
 */
function rowFill(run: RunData): RowFill {
  let f = fills.get(run);
  if (f) return f;
  const cols = run.valueCols;
  const args: unknown[] = [];
  const params: string[] = [];
  const stores = cols.map((c, j) => {
    if (!(c instanceof PackedColumn)) {
      args.push(c);
      params.push(`c${j}`);
      return `out[${j}] = c${j}[i];`;
    }
    const values = (c as Int32Column | Float64Column | BigInt64Column | Int32BigIntColumn | BoolColumn).values;
    args.push(values, c.nulls);
    params.push(`c${j}`, `n${j}`);
    const v = c instanceof BoolColumn ? `c${j}[i] === 1` : c instanceof Int32BigIntColumn ? `BigInt(c${j}[i])` : `c${j}[i]`;
    return c.nulls === undefined ? `out[${j}] = ${v};` : `out[${j}] = (n${j}[i >>> 3] & (1 << (i & 7))) !== 0 ? null : ${v};`;
  });
  // eslint-disable-next-line @typescript-eslint/no-implied-eval
  f = new Function(...params, `'use strict'; return function rowFill(i, out) { ${stores.join(' ')} };`)(...args) as RowFill;
  fills.set(run, f);
  return f;
}

class Cursor extends PartCursor {
  /** Key columns of the current part. */
  keyCols: unknown[][] = [];
  private fill!: RowFill;
  /** The record handed to the merge function, refilled in place for every row. */
  readonly kv: KeyValue;
  /** The run's level, when the merge was given them (RunsMerge's `levels`). */
  level = 0;

  constructor(parts: RunParts, keyArity: number, valueArity: number) {
    super(parts);
    this.kv = { key: new Array(keyArity).fill(null), seq: 0, kind: 0 as RowKind, value: new Array(valueArity).fill(null) };
    this.settle();
  }

  /** Moves to the next non-empty part (PartCursor.toNextPart) and takes its key columns and row fill. */
  private settle(): void {
    if (!this.toNextPart()) return;
    const p = this.part!;
    this.keyCols = p.keyCols;
    this.fill = rowFill(p);
  }

  /** The current record (valid until the next advance). */
  current(): KeyValue {
    const kv = this.kv;
    const i = this.ri;
    const key = kv.key;
    for (let k = 0; k < key.length; k++) key[k] = this.keyCols[k]![i];
    const part = this.part!;
    kv.seq = part.seq[i]!;
    kv.kind = part.kind[i] as RowKind;
    this.fill(i, kv.value);
    return kv;
  }

  advance(): void {
    this.ri++;
    if (this.ri >= this.part!.rowCount) this.settle();
  }
}

/**
 * Merges `runs` (each a list of key-ordered parts, keys unique within a run: decoded, or RunParts
 * that decode each when the merge reaches it) and calls `sink` with each merged record, keys
 * ascending, with the number of input records folded into it (one per run holding the key).
 * `keyCmps` are the key columns' comparators (the ones `keyComparator` of merge-function.ts
 * chains). The record passed to `sink` may share arrays with cursor state: copy what you keep
 * before returning. In steps: `step(n)` merges at most n keys and says whether the
 * merge is done (`step(Infinity)`: all of it), so a caller can spread one compaction over many
 * turns of its event loop (TableWriter's deferred compaction); the records, their order and the
 * calls are the same whatever the steps. `older(key)`, when given, returns the key's records in
 * runs older than these (newest first; keys asked in ascending order): they are folded with the
 * group, and a result that is `older(key)[0]` itself is not passed to `sink`. `levels` (each
 * run's level), given for tables that fold a key's lowest record above level 0 only: see the header.
 * A key's lone record goes to `sink` unfolded, without `onKeyMerged` (the header).
 */
export class RunsMerge {
  /** The runs' cursors in run order (the first among equal keys wins), those with rows left. */
  private readonly cursors: Cursor[] = [];
  /** Runs whose cursor is made (its first part decoded): a stepped merge opens one per step. */
  private opened = 0;
  private readonly nk: number;
  private readonly group: KeyValue[] = [];
  /** Positions in `cursors` of the cursors at the smallest key, ascending. */
  private readonly at: number[] = [];
  /** Whether a key's group goes through `complete` (older or levels given): decided once, not per key. */
  private readonly completes: boolean;
  /** Whether a lone record is written unfolded (the header): decided once, not per key. */
  private readonly loneAsIs: boolean;

  constructor(
    private readonly runs: readonly (readonly RunData[] | RunParts)[],
    private readonly keyCmps: readonly Comparator[],
    private readonly valueArity: number,
    private readonly merge: MergeFunction,
    private readonly order: (a: KeyValue, b: KeyValue) => number,
    private readonly onKeyMerged: (() => void) | undefined,
    private readonly sink: (kv: KeyValue, records: number) => void,
    private readonly older?: (key: readonly unknown[]) => readonly KeyValue[],
    private readonly levels?: readonly number[],
  ) {
    this.nk = keyCmps.length;
    this.completes = older !== undefined || levels !== undefined;
    this.loneAsIs = levels === undefined || !levels.includes(0);
    if (levels !== undefined && levels.length !== runs.length) throw new Error(`assertion failed: ${levels.length} levels for ${runs.length} runs`);
  }

  get done(): boolean {
    return this.opened === this.runs.length && this.cursors.length === 0;
  }

  /**
   * Merges up to `maxKeys` keys; true when every key is merged. Before the first key every run's
   * first part is decoded: all at once when `maxKeys` is Infinity, else one run per call.
   */
  step(maxKeys: number): boolean {
    const { cursors, nk, keyCmps, group, at, merge, order, onKeyMerged, sink, completes, loneAsIs } = this;
    while (this.opened < this.runs.length) {
      const level = this.levels?.[this.opened] ?? 0;
      const r = this.runs[this.opened++]!;
      const c = new Cursor(Array.isArray(r) ? decodedParts(r) : (r as RunParts), nk, this.valueArity);
      c.level = level;
      if (!c.done) cursors.push(c);
      if (maxKeys !== Infinity) return false;
    }
    const cmp = (ac: unknown[][], ai: number, bc: unknown[][], bi: number): number => {
      for (let k = 0; k < nk; k++) {
        const r = keyCmps[k]!(ac[k]![ai], bc[k]![bi]);
        if (r !== 0) return r;
      }
      return 0;
    };
    for (let n = 0; n < maxKeys && cursors.length > 0; n++) {
      // The smallest key, first cursor among equals (as mergeRuns), and every cursor holding it, in
      // cursor order — found in one pass: a cursor equal to the smallest so far joins it, a smaller
      // one starts over (none before it can equal it, as they were not below the previous smallest).
      let min = cursors[0]!;
      let count = 1;
      at[0] = 0;
      for (let i = 1; i < cursors.length; i++) {
        const c = cursors[i]!;
        const r = cmp(c.keyCols, c.ri, min.keyCols, min.ri);
        if (r < 0) {
          min = c;
          at[0] = i;
          count = 1;
        } else if (r === 0) at[count++] = i;
      }
      group.length = 0;
      for (let g = 0; g < count; g++) {
        const c = cursors[at[g]!]!;
        group.push(c.current());
        c.advance();
      }
      // Before the splice: `complete` reads the levels of the group's cursors.
      const stands = completes ? this.complete(count) : undefined;
      for (let g = count - 1; g >= 0; g--) if (cursors[at[g]!]!.done) cursors.splice(at[g]!, 1);
      if (loneAsIs && count === 1 && group.length === 1) {
        sink(group[0]!, 1);
        continue;
      }
      merge.reset();
      if (group.length === 1) merge.add(group[0]!);
      else {
        sortGroup(group, order);
        for (let i = 0; i < group.length; i++) merge.add(group[i]!);
      }
      const result = merge.result();
      onKeyMerged?.();
      if (result !== undefined && result !== stands) sink(result, group.length);
    }
    return cursors.length === 0;
  }

  /**
   * Completes the group of `count` records (cursors[at[g]]'s) as `older` and `levels` say (the
   * class header); returns the older record that stands if the fold is it, else undefined.
   */
  private complete(count: number): KeyValue | undefined {
    const { group, older, levels, cursors, at } = this;
    if (levels !== undefined) {
      let low = -1;
      let lowLevel = 0;
      for (let g = 0; g < count; g++) {
        const l = cursors[at[g]!]!.level;
        if (l > 0 && (low === -1 || l < lowLevel)) {
          low = g;
          lowLevel = l;
        }
      }
      if (low !== -1) {
        // The unit holds the key's complete value: its higher records are stale, nothing older is asked.
        let n = 0;
        for (let g = 0; g < count; g++) if (g === low || cursors[at[g]!]!.level === 0) group[n++] = group[g]!;
        group.length = n;
        return undefined;
      }
      if (older === undefined) return undefined;
      const found = older(group[0]!.key);
      if (found.length === 0) return undefined;
      group.push(found[0]!); // the lowest older level's; the ones above it are stale
      return found[0];
    }
    const found = older!(group[0]!.key);
    for (let i = 0; i < found.length; i++) group.push(found[i]!);
    return found.length > 0 ? found[0] : undefined;
  }
}

/**
 * Sorts a group in place, stably: the order Array.prototype.sort (stable) gives, without its
 * per-call work array. Groups hold one record per run (a handful), mostly already in order.
 */
export function sortGroup(group: KeyValue[], order: (a: KeyValue, b: KeyValue) => number): void {
  for (let i = 1; i < group.length; i++) {
    const x = group[i]!;
    let j = i - 1;
    if (order(group[j]!, x) <= 0) continue;
    while (j >= 0 && order(group[j]!, x) > 0) {
      group[j + 1] = group[j]!;
      j--;
    }
    group[j + 1] = x;
  }
}
