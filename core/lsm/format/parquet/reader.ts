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
import { readColumnChunk } from './chunk-reader.ts';
import { type FileMeta, readFooter } from './footer-read.ts';
import { describeLogical, PHYSICAL_NAMES } from './schema.ts';
import { materializerFor } from './values.ts';

export interface ReadColumn {
  name: string;
  type: DataType;
  asNumber?: boolean;
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

export function readColumns(bytes: Uint8Array, request: ReadColumn[], path: string): { rowCount: number; columns: unknown[][] } {
  const meta = footer(bytes, path);
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
    return { leafIndex, leaf, materialize: materializerFor(r.type, r.asNumber === true, leaf, fail) };
  });
  // Present columns are written slot by slot by their chunks; only absent ones need filling.
  const columns = plan.map((p, c) => (p || nestedPlan[c] ? new Array<unknown>(rowCount) : new Array<unknown>(rowCount).fill(null)));
  guarded(path, () => {
    let base = 0;
    for (const g of meta.rowGroups) {
      plan.forEach((p, c) => {
        if (!p) return;
        readColumnChunk(bytes, g.chunks[p.leafIndex]!, p.leaf, p.materialize, columns[c]!, base, g.numRows);
      });
      base += g.numRows;
    }
    nestedPlan.forEach((node, c) => {
      if (node) readNestedColumn(bytes, node, request[c]!.type, meta.leaves, meta.rowGroups, columns[c]!, fail);
    });
  });
  return { rowCount, columns };
}
