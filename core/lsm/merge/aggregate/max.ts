// `max`: keeps the largest non-null input (types.ts comparator: numbers, strings by UTF-8
// bytes, bytes, false < true, dates and times). Cannot retract.

import { comparatorFor, withNullable, type Comparator, type DataType } from '../../types.ts';
import type { FieldAggregator } from './field-aggregator.ts';

export class MaxAggregator implements FieldAggregator {
  readonly name = 'max';
  readonly ignoresNull = true;
  private readonly cmp: Comparator;

  constructor(type: DataType) {
    this.cmp = comparatorFor(withNullable(type, false));
  }

  agg(acc: unknown, input: unknown): unknown {
    if (input === null || input === undefined) return acc;
    if (acc === null || acc === undefined) return input;
    return this.cmp(input, acc) > 0 ? input : acc;
  }
}
