// Reading the per-column options of aggregate functions (`fields.<f>.aggregate-function`,
// `fields.default-aggregate-function`, `fields.<f>.ignore-retract`, `list-agg-delimiter`,
// `distinct`) from a schema, and building each column's aggregator. Shared by the aggregation
// and partial-update engines and by schema validation.

import { invalidArgument } from '../errors.ts';
import type { TableSchema } from '../schema.ts';
import { createAggregator, type FieldAggregator } from './aggregate/field-aggregator.ts';

export const DEFAULT_AGGREGATE_FUNCTION_OPTION = 'fields.default-aggregate-function';

function bool(raw: Readonly<Record<string, string>>, key: string): boolean {
  const v = raw[key];
  if (v === undefined) return false;
  const t = v.trim().toLowerCase();
  if (t === 'true') return true;
  if (t === 'false') return false;
  throw invalidArgument(`option '${key}': expected 'true' or 'false', got '${v}'`);
}

/**
 * The aggregator of column `i` given the function name and the option that chose it; undefined
 * when no function applies. `fallback` is used when neither the column nor the table default
 * names one.
 */
export function aggregatorFor(schema: TableSchema, i: number, fallback: string | undefined): FieldAggregator | undefined {
  const raw = schema.options.raw;
  const name = schema.fields[i]!.name;
  const own = `fields.${name}.aggregate-function`;
  let fn: string | undefined = raw[own];
  let option = own;
  if (fn === undefined && raw[DEFAULT_AGGREGATE_FUNCTION_OPTION] !== undefined) {
    fn = raw[DEFAULT_AGGREGATE_FUNCTION_OPTION];
    option = DEFAULT_AGGREGATE_FUNCTION_OPTION;
  }
  fn ??= fallback;
  if (fn === undefined) return undefined;
  const delimiter = raw[`fields.${name}.list-agg-delimiter`];
  return createAggregator(fn, schema.fields[i]!.type, {
    column: name,
    option,
    ignoreRetract: bool(raw, `fields.${name}.ignore-retract`),
    distinct: bool(raw, `fields.${name}.distinct`),
    ...(delimiter === undefined ? {} : { delimiter }),
  });
}

/** InvalidArgument for a column named by `fields.<f>.<aggregate option>` that does not exist. */
export function checkFieldOptionColumns(schema: TableSchema): void {
  for (const k of Object.keys(schema.options.raw)) {
    const m = /^fields\.(.+)\.(aggregate-function|ignore-retract|list-agg-delimiter|distinct)$/.exec(k);
    if (m && !schema.fieldIndex.has(m[1]!)) throw invalidArgument(`option '${k}' names unknown column '${m[1]}'`);
  }
}

/**
 * InvalidArgument for the first of `keys` that is a `fields.<f>.ignore-retract` or `.distinct`
 * whose value is not 'true'/'false' (any case), naming the option. Checked where the options are
 * set here (creation: all; ALTER: the ones it sets): Paimon parses them only when it builds a
 * column's aggregator, so a table written elsewhere whose engine builds none (deduplicate,
 * first-row) opens with any value; an aggregator that reads one refuses it then (aggregatorFor).
 */
export function checkFieldOptionBooleans(raw: Readonly<Record<string, string>>, keys: Iterable<string>): void {
  for (const k of keys) if (/^fields\..+\.(ignore-retract|distinct)$/.test(k)) bool(raw, k);
}
