// `deduplicate`: the newest record of a key stands for it; a newest -D removes the key.
// `ignore-delete` drops -D and -U input; `ignore-update-before` drops -U input.

import { RowKind, type KeyValue } from '../key-value.ts';
import type { TableOptions } from '../options.ts';
import type { MergeFunction } from './merge-function.ts';

export class DeduplicateMergeFunction implements MergeFunction {
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
}
