// readParquet / readParquetFooter: requested columns, matched by name as Java Paimon matches
// them, from every row group of a complete file held in memory.
//
// Invariants: a requested column missing from the file reads as nulls (schema evolution); a
// column whose physical type cannot hold the requested type is a Corruption; every failure to
// decode — thrift, levels, values, codecs, sizes, CRCs, counts — surfaces as `corruption(path, …)`
// (NotSupported for valid features outside this codec's subset), never as garbage rows or a bare
// TypeError/RangeError.

import { corruption, LsmError } from '../../errors.ts';
import { isNestedType, type DataType } from '../../types.ts';
import { readNestedColumn, type SchemaNode } from './nested.ts';
import { readColumnChunk, type TypedColumn } from './chunk-reader.ts';
import { type FileMeta, readFooter } from './footer-read.ts';
import { describeLogical, Physical, PHYSICAL_NAMES } from './schema.ts';
import { materializerFor } from './values.ts';

export interface ReadColumn {
  name: string;
  type: DataType;
  asNumber?: boolean;
  /**
   * Decode into a TypedColumn where the column's values have one (readColumnsTyped only): INT,
   * SMALLINT, TINYINT and DATE stored as INT32, BIGINT as INT64 (without asNumber), BOOLEAN.
   */
  typed?: boolean;
}

export interface FooterColumn {
  name: string;
  fieldId?: number;
  physicalType: string;
  logicalType?: string;
  required: boolean;
}

/** Runs `f`, turning any non-LsmError into a Corruption of `path`. */
function guarded<T>(path: string, f: () => T): T {
  try {
    return f();
  } catch (e) {
    if (e instanceof LsmError) throw e;
    throw corruption(path, `Parquet: ${(e as Error)?.message ?? String(e)}`, e);
  }
}

function footer(bytes: Uint8Array, path: string): FileMeta {
  return guarded(path, () => readFooter(bytes));
}

export function readFooterColumns(bytes: Uint8Array, path: string): { rowCount: number; columns: FooterColumn[] } {
  const meta = footer(bytes, path);
  return {
    rowCount: meta.numRows,
    columns: meta.leaves.map((l) => {
      const c: FooterColumn = { name: l.path ? l.path.join('.') : l.name, physicalType: PHYSICAL_NAMES[l.physical]!, required: l.required };
      if (l.fieldId !== undefined) c.fieldId = l.fieldId;
      const logical = describeLogical(l.logical, l.converted);
      if (logical !== undefined) c.logicalType = logical;
      return c;
    }),
  };
}

export function readColumns(bytes: Uint8Array, request: ReadColumn[], path: string, expectRows?: number): { rowCount: number; columns: unknown[][] } {
  // Without `typed` requests every column is a JS array.
  return readColumnsTyped(bytes, request.map(({ typed: _, ...r }) => r), path, expectRows) as { rowCount: number; columns: unknown[][] };
}

/** The typed array a `typed` request decodes into, or undefined when the column keeps JS values. */
function typedArrayFor(r: ReadColumn, physical: Physical, rowCount: number): TypedColumn['values'] | undefined {
  if (!r.typed) return undefined;
  switch (r.type.root) {
    case 'TINYINT':
    case 'SMALLINT':
    case 'INT':
    case 'DATE':
      return physical === Physical.INT32 ? new Int32Array(rowCount) : undefined;
    case 'BIGINT':
      return physical === Physical.INT64 && !r.asNumber ? new BigInt64Array(rowCount) : undefined;
    case 'BOOLEAN':
      return physical === Physical.BOOLEAN ? new Uint8Array(rowCount) : undefined;
    default:
      return undefined;
  }
}

/**
 * `readColumns`, where a column requested `typed` whose type has a typed form comes back as a
 * TypedColumn (the same values, no JS value per row); every other column as a JS array.
 */
export function readColumnsTyped(bytes: Uint8Array, request: ReadColumn[], path: string, expectRows?: number): { rowCount: number; columns: Array<unknown[] | TypedColumn> } {
  const meta = footer(bytes, path);
  // The caller's count (a data file's manifest entry) is checked before any column is allocated
  // by the footer's: a damaged num_rows would otherwise size them, absent columns' null fill too.
  if (expectRows !== undefined && meta.numRows !== expectRows) throw corruption(path, `Parquet: the footer counts ${meta.numRows} rows where ${expectRows} were expected`);
  const byName = new Map<string, number>();
  // Only top-level leaves match by name; leaves of ARRAY/MAP groups are read through nested.ts.
  meta.leaves.forEach((l, i) => {
    if (!l.path) byName.set(l.name, i);
  });
  const nestedByName = new Map<string, SchemaNode>();
  for (const f of meta.fields) if (f.children) nestedByName.set(f.name, f);
  const rowCount = meta.numRows;
  const fail = (msg: string): never => {
    throw corruption(path, `Parquet: ${msg}`);
  };
  const nestedPlan = request.map((r) => {
    if (!isNestedType(r.type)) {
      if (nestedByName.has(r.name)) fail(`column '${r.name}' is a group in the file, which cannot hold ${r.type.root}`);
      return undefined;
    }
    if (byName.has(r.name)) fail(`column '${r.name}' is a leaf in the file, which cannot hold ${r.type.root}`);
    return nestedByName.get(r.name);
  });
  const plan = request.map((r) => {
    if (isNestedType(r.type)) return undefined;
    const leafIndex = byName.get(r.name);
    if (leafIndex === undefined) return undefined;
    const leaf = meta.leaves[leafIndex]!;
    // The materializer also checks that the file's physical type can hold the requested type.
    const materialize = materializerFor(r.type, r.asNumber === true, leaf, fail);
    const values = guarded(path, () => typedArrayFor(r, leaf.physical, rowCount));
    return { leafIndex, leaf, materialize, typed: values ? { values, nulls: undefined } : undefined };
  });
  // Present columns are written slot by slot by their chunks; only absent ones need filling.
  // rowCount is the footer's num_rows, which readFooter has checked against the row groups' counts
  // and those against every flat chunk's num_values; a count no array can hold is still a
  // Corruption (guarded), never a bare RangeError.
  const columns = guarded(path, () =>
    plan.map((p, c) => (p?.typed ? NO_VALUES : p || nestedPlan[c] ? new Array<unknown>(rowCount) : new Array<unknown>(rowCount).fill(null))),
  );
  guarded(path, () => {
    let base = 0;
    for (const g of meta.rowGroups) {
      plan.forEach((p, c) => {
        if (!p) return;
        readColumnChunk(bytes, g.chunks[p.leafIndex]!, p.leaf, p.materialize, columns[c]!, base, g.numRows, p.typed);
      });
      base += g.numRows;
    }
    nestedPlan.forEach((node, c) => {
      if (node) readNestedColumn(bytes, node, request[c]!.type, meta.leaves, meta.rowGroups, columns[c]!, fail);
    });
  });
  return { rowCount, columns: columns.map((col, c) => plan[c]?.typed ?? col) };
}

/** The placeholder of a typed column while its chunks are read (they write `typed` instead). */
const NO_VALUES: unknown[] = Object.freeze([]) as unknown as unknown[];
