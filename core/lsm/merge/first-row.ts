// `first-row`: the oldest record of a key stands for it (Paimon's FirstRowMergeFunction).
// -D / -U input is dropped with `ignore-delete` (-U also with `ignore-update-before`); otherwise
// it is refused — at write time by the table writer (`retractionRefusal`), and here, should a
// file written elsewhere carry one. No `sequence.field` (refused at table creation).
//
// Deliberate difference from Paimon: Paimon's batch scans of a first-row table skip level 0
// (rows become visible only once compacted, so compaction there is synchronous). This store
// merges every level on read, so a freshly committed first row is visible at once; the result
// is the same row Paimon shows after compaction, only sooner.
//
// A fold is always right for this store's reader above older records (the oldest input of a fold
// never beats an older record below it), but Java reads the files above level 0 of a first-row
// table without merging them, so a key must sit in one of them only: compaction drops a key whose
// first row lies in an older run (compaction/lookup-levels.ts, `absorbsOlder`).

import { invalidArgument } from '../errors.ts';
import { rowAt, type RunData } from '../data-file.ts';
import { isAdd, RowKind, type KeyValue } from '../key-value.ts';
import type { TableOptions } from '../options.ts';
import type { MergeFunction } from './merge-function.ts';

const REFUSAL =
  "first-row tables take no -D/-U records (the first row of a key is kept forever); set 'ignore-delete' (or 'first-row.ignore-delete') to drop them";

export class FirstRowMergeFunction implements MergeFunction {
  /** MergeFunction.absorbsOlder: the oldest record wins, whatever lies above it. */
  readonly absorbsOlder = true;
  private first: KeyValue | undefined;
  private readonly ignoreDelete: boolean;
  private readonly ignoreUpdateBefore: boolean;

  constructor(options: TableOptions) {
    this.ignoreDelete = options.ignoreDelete;
    this.ignoreUpdateBefore = options.ignoreUpdateBefore;
  }

  reset(): void {
    this.first = undefined;
  }

  retractionRefusal(kind: RowKind): string | undefined {
    if (this.ignoreDelete || (kind === RowKind.UPDATE_BEFORE && this.ignoreUpdateBefore)) return undefined;
    return REFUSAL;
  }

  add(kv: KeyValue): void {
    if (kv.kind === RowKind.DELETE || kv.kind === RowKind.UPDATE_BEFORE) {
      if (this.retractionRefusal(kv.kind) === undefined) return;
      throw invalidArgument(REFUSAL);
    }
    this.first ??= kv;
  }

  result(): KeyValue | undefined {
    return this.first;
  }

  /** MergeFunction.foldAt: the oldest record, when every record is an add (a retraction takes `add`, which may refuse it). */
  foldAt(parts: readonly RunData[], rows: readonly number[], n: number): unknown[] | undefined {
    if (n === 0) return undefined;
    for (let k = 0; k < n; k++) if (!isAdd(parts[k]!.kind[rows[k]!]!)) return undefined;
    return rowAt(parts[0]!, rows[0]!);
  }
}
