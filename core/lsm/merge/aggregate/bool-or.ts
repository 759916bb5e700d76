// `bool_or`: logical OR of the non-null inputs. Cannot retract.

import type { FieldAggregator } from './field-aggregator.ts';

export class BoolOrAggregator implements FieldAggregator {
  readonly name = 'bool_or';
  readonly ignoresNull = true;

  agg(acc: unknown, input: unknown): unknown {
    if (input === null || input === undefined) return acc;
    if (acc === null || acc === undefined) return input;
    return (acc as boolean) || (input as boolean);
  }
}
