// The check of a scan's filters (ScanOptions.where) before any file is read, and of a lookup's key
// values (TableReader.get, `checkKeyValue`): a filter names a
// column of the reader's schema, a known op, and a value of the column's in-memory form. The
// comparators (types.ts) assume that form: a string against an INT column compared by JS coercion,
// NaN or `true` there matched every row, a null threw a TypeError from inside a comparison.
//
// Only the kind of value is checked, not the column's range or length: `k < 3000000000` on an INT
// or `c < 'xyz'` on a CHAR(2) is a meaningful comparison with an exact answer.

import { invalidArgument } from './errors.ts';
import type { TableSchema } from './schema.ts';
import type { Predicate, PredicateOp } from './table-read.ts';
import { describeValue, isStringType, typeToString, withNullable, type DataType } from './types.ts';

const OPS: readonly PredicateOp[] = ['=', '<', '<=', '>', '>=', 'prefix'];

/** What a filter value of `t` must be, or undefined when `v` is one (ARRAY and MAP: their comparator refuses them). */
function expectedKind(t: DataType, v: unknown): string | undefined {
  switch (t.root) {
    case 'BOOLEAN':
      return typeof v === 'boolean' ? undefined : 'a boolean';
    case 'BIGINT':
      return typeof v === 'bigint' ? undefined : 'a bigint';
    case 'DECIMAL':
      return typeof v === 'bigint' ? undefined : 'an unscaled bigint';
    case 'FLOAT':
    case 'DOUBLE':
      // NaN is a value of these (Java's Double.compare orders it above every number).
      return typeof v === 'number' ? undefined : 'a number';
    case 'CHAR':
    case 'VARCHAR':
    case 'STRING':
      return typeof v === 'string' ? undefined : 'a string';
    case 'BINARY':
    case 'VARBINARY':
    case 'BYTES':
      return v instanceof Uint8Array ? undefined : 'bytes (a Uint8Array)';
    case 'TIMESTAMP':
    case 'TIMESTAMP_LTZ':
      return typeof v === 'number' && !Number.isNaN(v) ? undefined : 'a number (epoch microseconds)';
    case 'ARRAY':
    case 'MAP':
      return undefined;
    default:
      // TINYINT…INT, DATE (days), TIME (ms of the day): a NaN would compare equal to every value.
      return typeof v === 'number' && !Number.isNaN(v) ? undefined : 'a number';
  }
}

/** InvalidArgument naming the column and what was expected, for the first filter of `where` that is not well formed. */
export function checkFilters(schema: TableSchema, where: readonly Predicate[] | undefined): void {
  for (const p of where ?? []) {
    const index = schema.fieldIndex.get(p.column);
    if (index === undefined) throw invalidArgument(`filter names unknown column '${p.column}'`);
    if (!OPS.includes(p.op)) throw invalidArgument(`filter on '${p.column}': unknown op ${describeValue(p.op)}, expected one of ${OPS.join(' ')}`);
    const t = schema.fields[index]!.type;
    // Named without NOT NULL: a filter value is never null whatever the column allows.
    const type = typeToString(withNullable(t, true));
    if (p.op === 'prefix' && !isStringType(t)) throw invalidArgument(`prefix filter on '${p.column}' needs a string column, got ${type}`);
    const expected = expectedKind(t, p.value);
    if (expected !== undefined) throw invalidArgument(`filter on '${p.column}' (${type}): expected ${expected}, got ${describeValue(p.value)}`);
  }
}

/**
 * InvalidArgument naming the column and the form expected when a lookup key's value (`get`) is not
 * of its column's in-memory form, as for a filter: of another kind it hashed to another bucket or
 * compared by JS coercion, a silent miss. Null and undefined are left to the lookup's own message.
 */
export function checkKeyValue(name: string, t: DataType, v: unknown): void {
  if (v === null || v === undefined) return;
  const expected = expectedKind(t, v);
  if (expected !== undefined) throw invalidArgument(`lookup key '${name}' (${typeToString(withNullable(t, true))}): expected ${expected}, got ${describeValue(v)}`);
}
