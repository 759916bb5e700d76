// `first_non_null_value` (legacy alias `first_not_null_value`): the first non-null input in merge
// order. Cannot retract.

import type { FieldAggregator } from './field-aggregator.ts';

export class FirstNonNullValueAggregator implements FieldAggregator {
  readonly name = 'first_non_null_value';
  readonly ignoresNull = true;

  agg(acc: unknown, input: unknown): unknown {
    return acc === null || acc === undefined ? (input ?? null) : acc;
  }
}
