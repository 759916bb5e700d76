// One aggregate function of the `aggregation` merge engine (and of aggregated sequence groups in
// `partial-update`): Paimon's FieldAggregator. One file per function; `createAggregator` picks
// one by its option name and checks the column type.
//
// Contract: `agg(acc, input)` folds one input into the accumulator (acc null = nothing yet);
// null inputs are ignored unless the function says otherwise (last_value, first_value). Values
// are in memory form (types.ts). `retract` is present only where Paimon can retract; the merge
// engines refuse -U/-D for the others unless `fields.<f>.ignore-retract` is set.
//
// `retractFold` says whether a fold containing retractions can be written out as an ordinary row
// and merged again later with older rows of the key (Paimon #4670, see merge/README.md):
//   exact      the folded row stands for its inputs (sum: a delta; last_value: a constant)
//   until-add  unsafe from a non-null retraction until the next non-null input (last_non_null)
//   inexact    unsafe after any non-null retraction (product: division does not commute)
//   ignored    retractions are dropped (`ignore-retract`)

import { invalidArgument, notSupported } from '../../errors.ts';
import { isNestedType, isNumericType, typeToString, type DataType } from '../../types.ts';
import { CollectAggregator } from './collect.ts';
import { MergeMapAggregator } from './merge-map.ts';
import { BoolAndAggregator } from './bool-and.ts';
import { BoolOrAggregator } from './bool-or.ts';
import { FirstNonNullValueAggregator } from './first-non-null-value.ts';
import { FirstValueAggregator } from './first-value.ts';
import { LastNonNullValueAggregator } from './last-non-null-value.ts';
import { LastValueAggregator } from './last-value.ts';
import { ListaggAggregator } from './listagg.ts';
import { MaxAggregator } from './max.ts';
import { MinAggregator } from './min.ts';
import { ProductAggregator } from './product.ts';
import { SumAggregator } from './sum.ts';

export type RetractFold = 'exact' | 'until-add' | 'inexact' | 'ignored';

export interface FieldAggregator {
  /** The function's option name, e.g. `sum`. */
  readonly name: string;
  /** True when agg(acc, null) === acc, so a null in a folded row means "no input". */
  readonly ignoresNull: boolean;
  /** Present only for functions that can retract. */
  readonly retractFold?: RetractFold;
  agg(acc: unknown, input: unknown): unknown;
  retract?(acc: unknown, input: unknown): unknown;
  /** Starts the fold of a new key (first_value keeps whether it has seen an input). */
  reset?(): void;
}

/** Per-column options of an aggregate function (`fields.<f>.*`). */
export interface FieldAggregateOptions {
  /** The column, for messages. */
  readonly column: string;
  /** The option that chose the function, for messages (`fields.<f>.aggregate-function`). */
  readonly option: string;
  readonly ignoreRetract?: boolean;
  /** `fields.<f>.list-agg-delimiter` (default ','). */
  readonly delimiter?: string;
  /** `fields.<f>.distinct` (default false). */
  readonly distinct?: boolean;
}

export const AGGREGATE_FUNCTIONS = [
  'sum', 'product', 'max', 'min', 'last_value', 'last_non_null_value', 'first_value',
  'first_non_null_value', 'first_not_null_value', 'listagg', 'bool_and', 'bool_or', 'collect', 'merge_map',
] as const;

/** Paimon functions over types this store does not have (ROW) or sketches it does not build. */
const UNSUPPORTED: Record<string, string> = {
  merge_map_with_keytime: 'it aggregates MAP<K, ROW<…>> columns, and this store has no ROW type',
  nested_update: 'it aggregates ARRAY<ROW> columns, and this store has no ROW type',
  nested_partial_update: 'it aggregates ARRAY<ROW> columns, and this store has no ROW type',
  rbm32: 'Roaring bitmap aggregation is not implemented',
  rbm64: 'Roaring bitmap aggregation is not implemented',
  hll_sketch: 'DataSketches HLL aggregation is not implemented',
  theta_sketch: 'DataSketches Theta aggregation is not implemented',
};

/**
 * The aggregator for one column. InvalidArgument for an unknown function or a type it does not
 * take; NotSupported for Paimon functions this store does not implement.
 */
export function createAggregator(name: string, type: DataType, o: FieldAggregateOptions): FieldAggregator {
  const fn = name.trim().toLowerCase();
  const typeError = (expected: string) =>
    invalidArgument(`option '${o.option}': '${fn}' needs ${expected}, but column '${o.column}' is ${typeToString(type)}`);
  let a: FieldAggregator;
  switch (fn) {
    case 'sum':
      if (!isNumericType(type)) throw typeError('a numeric column');
      a = new SumAggregator(type, o.column);
      break;
    case 'product':
      if (!isNumericType(type)) throw typeError('a numeric column');
      a = new ProductAggregator(type, o.column);
      break;
    case 'max':
      if (isNestedType(type)) throw typeError('a column with an order (not ARRAY or MAP)');
      a = new MaxAggregator(type);
      break;
    case 'min':
      if (isNestedType(type)) throw typeError('a column with an order (not ARRAY or MAP)');
      a = new MinAggregator(type);
      break;
    case 'collect':
      if (type.root !== 'ARRAY') throw typeError('an ARRAY column');
      a = new CollectAggregator(o.distinct ?? false);
      break;
    case 'merge_map':
      if (type.root !== 'MAP') throw typeError('a MAP column');
      a = new MergeMapAggregator();
      break;
    case 'last_value':
      a = new LastValueAggregator();
      break;
    case 'last_non_null_value':
      a = new LastNonNullValueAggregator();
      break;
    case 'first_value':
      a = new FirstValueAggregator();
      break;
    case 'first_non_null_value':
    case 'first_not_null_value':
      a = new FirstNonNullValueAggregator();
      break;
    case 'listagg':
      if (type.root !== 'STRING' && type.root !== 'VARCHAR') throw typeError('a STRING or VARCHAR column');
      if (o.distinct && o.delimiter === '') throw invalidArgument(`option 'fields.${o.column}.list-agg-delimiter': must not be empty with 'fields.${o.column}.distinct'`);
      a = new ListaggAggregator(type, o.column, o.delimiter ?? ',', o.distinct ?? false);
      break;
    case 'bool_and':
      if (type.root !== 'BOOLEAN') throw typeError('a BOOLEAN column');
      a = new BoolAndAggregator();
      break;
    case 'bool_or':
      if (type.root !== 'BOOLEAN') throw typeError('a BOOLEAN column');
      a = new BoolOrAggregator();
      break;
    case 'count':
      throw invalidArgument(`option '${o.option}': 'count' is not an aggregate function; use 'sum' over a 0/1 column`);
    default:
      if (fn in UNSUPPORTED) throw notSupported(`option '${o.option}': aggregate function '${fn}' is not supported: ${UNSUPPORTED[fn]}`);
      throw invalidArgument(`option '${o.option}': unknown aggregate function '${name}', expected one of ${AGGREGATE_FUNCTIONS.join(', ')}`);
  }
  return o.ignoreRetract ? ignoringRetract(a) : a;
}

/**
 * `fields.<f>.ignore-retract=true`: retractions leave the accumulator alone. For `first_value` an
 * ignored retraction counts as its first input when it is the first record (the row it creates
 * holds null there): that is what the folded row says once written, so the key reads the same
 * however its records were folded. (Paimon's whole fold [-D, +I x] gives x but null once the -D
 * was compacted alone to the bottom level; found by the first_value model test.)
 */
function ignoringRetract(a: FieldAggregator): FieldAggregator {
  return {
    name: a.name,
    ignoresNull: a.ignoresNull,
    retractFold: 'ignored',
    agg: (acc, input) => a.agg(acc, input),
    retract: a.name === 'first_value' ? (acc) => a.agg(acc, null) : (acc) => acc,
    ...(a.reset ? { reset: () => a.reset!() } : {}),
  };
}

/** The error for a -U/-D that reaches a function that cannot retract. */
export function cannotRetract(column: string, fn: string): Error {
  return invalidArgument(
    `column '${column}': aggregate function '${fn}' cannot retract a -U/-D record; ` +
      `set 'fields.${column}.ignore-retract', 'ignore-delete' or 'aggregation.remove-record-on-delete'`,
  );
}
