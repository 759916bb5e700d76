// `deduplicate`: the newest record of a key stands for it; a newest -D (or -U) removes the key.
// `ignore-delete` drops -D and -U input. `ignore-update-before` is applied where records are
// written (TableWriter.write), not here: a -U committed before an ALTER set it reads as written,
// as Java's DeduplicateMergeFunction reads it (ignore-options-read.test.ts).

import { rowAt, type RunData } from '../data-file.ts';
import { isAdd, RowKind, type KeyValue } from '../key-value.ts';
import type { TableOptions } from '../options.ts';
import type { MergeFunction } from './merge-function.ts';

export class DeduplicateMergeFunction implements MergeFunction {
  /** MergeFunction.absorbsOlder: the newest record in merge order wins, whatever lies below it. */
  readonly absorbsOlder = true;
  private latest: KeyValue | undefined;
  private readonly ignoreDelete: boolean;

  constructor(options: TableOptions) {
    this.ignoreDelete = options.ignoreDelete;
  }

  reset(): void {
    this.latest = undefined;
  }

  add(kv: KeyValue): void {
    if (this.ignoreDelete && (kv.kind === RowKind.DELETE || kv.kind === RowKind.UPDATE_BEFORE)) return;
    this.latest = kv;
  }

  result(): KeyValue | undefined {
    return this.latest;
  }

  /** MergeFunction.foldAt: a newest add stands whatever came before it. */
  foldAt(parts: readonly RunData[], rows: readonly number[], n: number): unknown[] | undefined {
    if (n === 0 || !isAdd(parts[n - 1]!.kind[rows[n - 1]!]!)) return undefined;
    return rowAt(parts[n - 1]!, rows[n - 1]!);
  }
}
