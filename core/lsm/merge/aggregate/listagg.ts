// `listagg`: concatenates non-blank string inputs with `fields.<f>.list-agg-delimiter` (default
// ','), as Paimon's FieldListaggAgg: a blank (whitespace-only) input counts as null, and the
// first input is kept as is. With `fields.<f>.distinct` each later input is split at the
// delimiter and only tokens not yet in the accumulator (and not blank) are appended.
// A VARCHAR(n) result longer than n characters (as Paimon counts them: types.ts fitsChars) is an
// error naming the column. Cannot retract.

import { invalidArgument } from '../../errors.ts';
import { fitsChars, typeToString, type DataType } from '../../types.ts';
import type { FieldAggregator } from './field-aggregator.ts';

const isBlank = (s: string): boolean => s.trim().length === 0;

export class ListaggAggregator implements FieldAggregator {
  readonly name = 'listagg';
  readonly ignoresNull = true;

  constructor(
    private readonly type: DataType,
    private readonly column: string,
    private readonly delimiter: string,
    private readonly distinct: boolean,
  ) {}

  agg(acc: unknown, input: unknown): unknown {
    if (input === null || input === undefined || isBlank(input as string)) return acc;
    if (acc === null || acc === undefined || isBlank(acc as string)) return input;
    const a = acc as string;
    let r: string;
    if (this.distinct) {
      const seen = new Set(a.split(this.delimiter));
      r = a;
      for (const t of (input as string).split(this.delimiter)) {
        if (isBlank(t) || seen.has(t)) continue;
        seen.add(t);
        r += this.delimiter + t;
      }
    } else r = a + this.delimiter + (input as string);
    if (this.type.root === 'VARCHAR' && !fitsChars(r, this.type.length!)) {
      throw invalidArgument(`column '${this.column}' (${typeToString(this.type)}): listagg result is longer than ${this.type.length}`);
    }
    return r;
  }
}
