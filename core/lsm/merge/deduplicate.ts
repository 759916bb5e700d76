// `deduplicate`: the newest record of a key stands for it; a newest -D removes the key.
// `ignore-delete` drops -D and -U input; `ignore-update-before` drops -U input.

import { rowAt, type RunData } from '../data-file.ts';
import { isAdd, RowKind, type KeyValue } from '../key-value.ts';
import type { TableOptions } from '../options.ts';
import type { MergeFunction } from './merge-function.ts';

export class DeduplicateMergeFunction implements MergeFunction {
  /** MergeFunction.absorbsOlder: the newest record in merge order wins, whatever lies below it. */
  readonly absorbsOlder = true;
  private latest: KeyValue | undefined;
  private readonly ignoreDelete: boolean;
  private readonly ignoreUpdateBefore: boolean;

  constructor(options: TableOptions) {
    this.ignoreDelete = options.ignoreDelete;
    this.ignoreUpdateBefore = options.ignoreUpdateBefore;
  }

  reset(): void {
    this.latest = undefined;
  }

  add(kv: KeyValue): void {
    if (kv.kind === RowKind.DELETE && this.ignoreDelete) return;
    if (kv.kind === RowKind.UPDATE_BEFORE && (this.ignoreDelete || this.ignoreUpdateBefore)) return;
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
