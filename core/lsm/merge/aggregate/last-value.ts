// `last_value`: the latest input, nulls included. Retract sets null (a constant, so a fold with
// retractions merges exactly with older rows).

import type { FieldAggregator } from './field-aggregator.ts';

export class LastValueAggregator implements FieldAggregator {
  readonly name = 'last_value';
  readonly ignoresNull = false;
  readonly retractFold = 'exact' as const;

  agg(_acc: unknown, input: unknown): unknown {
    return input ?? null;
  }

  retract(): unknown {
    return null;
  }
}
