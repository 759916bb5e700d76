// `collect` (Paimon's FieldCollectAgg) over ARRAY columns: appends the input's elements to the
// accumulator; with `fields.<f>.distinct=true` the result holds each element once (first
// occurrence order, elements compared by value: types.ts `valuesEqual`, nulls included).
// Null input leaves the accumulator (a distinct fold still de-duplicates a lone input).
//
// Retract (Paimon: "best effort"): removes one occurrence per retracted element (with distinct,
// the element); a null accumulator stays null, since there is nothing to remember the retraction
// in. A fold holding a retraction therefore does not stand for its inputs when later merged
// with older rows (Paimon #4670): `retractFold` is `inexact` (merge/README.md).
// Values are never mutated: every result is a new array.

import { valuesEqual } from '../../types.ts';
import type { FieldAggregator } from './field-aggregator.ts';

function distinctOf(a: readonly unknown[], into: unknown[] = []): unknown[] {
  for (const e of a) if (!into.some((x) => valuesEqual(x, e))) into.push(e);
  return into;
}

export class CollectAggregator implements FieldAggregator {
  readonly name = 'collect';
  readonly ignoresNull = true;
  readonly retractFold = 'inexact' as const;

  constructor(private readonly distinct: boolean) {}

  agg(acc: unknown, input: unknown): unknown {
    const a = acc as unknown[] | null | undefined;
    const i = input as unknown[] | null | undefined;
    if (a == null && i == null) return null;
    if (!this.distinct) {
      if (a == null) return i;
      if (i == null) return a;
      return [...a, ...i];
    }
    return distinctOf(i ?? [], distinctOf(a ?? []));
  }

  retract(acc: unknown, input: unknown): unknown {
    if (acc === null || acc === undefined) return null;
    if (input === null || input === undefined) return acc;
    const out = [...(acc as unknown[])];
    for (const e of input as unknown[]) {
      const at = out.findIndex((x) => valuesEqual(x, e));
      if (at >= 0) out.splice(at, 1);
    }
    return out;
  }
}
