// `sum`: adds non-null inputs exactly; overflow of the column type is an error (numeric.ts).
// Retract subtracts; into a null accumulator it stores the negated input. A fold that contains
// retractions is a delta and merges exactly with older rows.

import type { DataType } from '../../types.ts';
import type { FieldAggregator } from './field-aggregator.ts';
import { arith, negate } from './numeric.ts';

export class SumAggregator implements FieldAggregator {
  readonly name = 'sum';
  readonly ignoresNull = true;
  readonly retractFold = 'exact' as const;

  constructor(private readonly type: DataType, private readonly column: string) {}

  agg(acc: unknown, input: unknown): unknown {
    if (input === null || input === undefined) return acc;
    if (acc === null || acc === undefined) return input;
    return arith(this.type, this.column, 'sum', 'add', acc, input);
  }

  retract(acc: unknown, input: unknown): unknown {
    if (input === null || input === undefined) return acc;
    if (acc === null || acc === undefined) return negate(this.type, this.column, input);
    return arith(this.type, this.column, 'sum', 'sub', acc, input);
  }
}
