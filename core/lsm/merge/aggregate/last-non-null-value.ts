// `last_non_null_value` (the default function): the latest non-null input. Retracting a non-null
// value sets null; retracting null changes nothing. A folded null cannot say "set null" (it reads
// as "no input"), so a fold ending in such a retraction must not be merged again with older rows
// (retractFold 'until-add').

import type { FieldAggregator } from './field-aggregator.ts';

export class LastNonNullValueAggregator implements FieldAggregator {
  readonly name = 'last_non_null_value';
  readonly ignoresNull = true;
  readonly retractFold = 'until-add' as const;

  agg(acc: unknown, input: unknown): unknown {
    return input === null || input === undefined ? acc : input;
  }

  retract(acc: unknown, input: unknown): unknown {
    return input === null || input === undefined ? acc : null;
  }
}
