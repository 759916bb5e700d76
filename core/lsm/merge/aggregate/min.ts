// `min`: keeps the smallest non-null input (types.ts comparator). Cannot retract.

import { comparatorFor, withNullable, type Comparator, type DataType } from '../../types.ts';
import type { FieldAggregator } from './field-aggregator.ts';

export class MinAggregator implements FieldAggregator {
  readonly name = 'min';
  readonly ignoresNull = true;
  private readonly cmp: Comparator;

  constructor(type: DataType) {
    this.cmp = comparatorFor(withNullable(type, false));
  }

  agg(acc: unknown, input: unknown): unknown {
    if (input === null || input === undefined) return acc;
    if (acc === null || acc === undefined) return input;
    return this.cmp(input, acc) < 0 ? input : acc;
  }
}
