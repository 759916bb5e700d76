// `product`: multiplies non-null inputs exactly; overflow of the column type is an error.
// Retract divides (integers truncate, DECIMAL rounds half-up); a null accumulator stays null.
// Division does not commute with later multiplications, so a fold with a retraction must not
// be merged again with older rows (retractFold 'inexact').

import type { DataType } from '../../types.ts';
import type { FieldAggregator } from './field-aggregator.ts';
import { arith } from './numeric.ts';

export class ProductAggregator implements FieldAggregator {
  readonly name = 'product';
  readonly ignoresNull = true;
  readonly retractFold = 'inexact' as const;

  constructor(private readonly type: DataType, private readonly column: string) {}

  agg(acc: unknown, input: unknown): unknown {
    if (input === null || input === undefined) return acc;
    if (acc === null || acc === undefined) return input;
    return arith(this.type, this.column, 'product', 'mul', acc, input);
  }

  retract(acc: unknown, input: unknown): unknown {
    if (input === null || input === undefined) return acc;
    if (acc === null || acc === undefined) return null;
    return arith(this.type, this.column, 'product', 'div', acc, input);
  }
}
