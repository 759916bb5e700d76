// Reads and validates the footer: magic at both ends, the footer length, FileMetaData decoded
// generically (thrift-compact.ts) and then checked field by field into typed metadata.
//
// Invariants of the result: the schema is a tree of groups (only ARRAY/MAP columns have them,
// nested.ts) and primitive leaves; a repeated top-level leaf is NotSupported; every row group has one chunk per leaf, in schema order, whose byte
// range [start, start + totalCompressed) lies inside the column-data area [4, footerStart); the
// row groups' row counts add up to num_rows. Violations throw `FooterError` (→ Corruption).

import { notSupported } from '../../errors.ts';
import { type LeafSchema, type Logical, type TimeUnit, Physical } from './schema.ts';
import { readStruct, type TStruct, type TValue } from './thrift-compact.ts';
import type { SchemaNode } from './nested.ts';

export class FooterError extends Error {}

export interface ChunkMeta {
  physical: Physical;
  codec: number;
  numValues: number;
  totalCompressed: number;
  /** First byte of the chunk (the dictionary page when there is one). */
  start: number;
}

export interface RowGroupMeta {
  numRows: number;
  chunks: ChunkMeta[];
}

export interface FileMeta {
  numRows: number;
  /** Every primitive leaf, in schema (= column chunk) order. */
  leaves: LeafSchema[];
  /** The root's children: leaves, or groups of ARRAY/MAP columns (nested.ts). */
  fields: SchemaNode[];
  rowGroups: RowGroupMeta[];
  createdBy?: string;
}

const DEC = new TextDecoder();

function fail(msg: string): never {
  throw new FooterError(msg);
}

function int(s: TStruct, id: number, what: string, optional?: false): number;
function int(s: TStruct, id: number, what: string, optional: true): number | undefined;
function int(s: TStruct, id: number, what: string, optional = false): number | undefined {
  const v = s[id];
  if (v === undefined && optional) return undefined;
  if (typeof v !== 'number' || !Number.isSafeInteger(v)) fail(`${what}: expected an integer, got ${describe(v)}`);
  return v;
}

function struct(v: TValue | undefined, what: string): TStruct {
  if (typeof v !== 'object' || v === null || v instanceof Uint8Array || Array.isArray(v) || v instanceof Map) {
    fail(`${what}: expected a struct`);
  }
  return v as TStruct;
}

function list(v: TValue | undefined, what: string): TValue[] {
  if (!Array.isArray(v)) fail(`${what}: expected a list`);
  return v;
}

function str(v: TValue | undefined, what: string): string {
  if (!(v instanceof Uint8Array)) fail(`${what}: expected a string`);
  return DEC.decode(v);
}

function describe(v: TValue | undefined): string {
  return v === undefined ? 'nothing' : typeof v === 'object' ? 'a structure' : String(v);
}

function unit(v: TValue | undefined): TimeUnit {
  const u = struct(v, 'time unit');
  return u[1] !== undefined ? 'MILLIS' : u[2] !== undefined ? 'MICROS' : 'NANOS';
}

function logical(v: TValue | undefined): Logical | undefined {
  if (v === undefined) return undefined;
  const l = struct(v, 'logicalType');
  const id = Number(Object.keys(l)[0]);
  const body = l[id];
  switch (id) {
    case 1:
      return { kind: 'STRING' };
    case 5: {
      const d = struct(body, 'DecimalType');
      return { kind: 'DECIMAL', scale: int(d, 1, 'decimal scale'), precision: int(d, 2, 'decimal precision') };
    }
    case 6:
      return { kind: 'DATE' };
    case 7:
    case 8: {
      const t = struct(body, 'time type');
      return { kind: id === 7 ? 'TIME' : 'TIMESTAMP', utc: t[1] === true, unit: unit(t[2]) };
    }
    case 10: {
      const t = struct(body, 'IntType');
      return { kind: 'INTEGER', bitWidth: int(t, 1, 'bitWidth'), signed: t[2] === true };
    }
    default:
      return { kind: 'OTHER', id };
  }
}

/** Parses the footer of a complete file. Throws FooterError / NotSupported. */
export function readFooter(bytes: Uint8Array): FileMeta {
  const n = bytes.length;
  if (n < 12) fail(`file of ${n} bytes is too short for Parquet`);
  const magic = (at: number): boolean => bytes[at] === 0x50 && bytes[at + 1] === 0x41 && bytes[at + 2] === 0x52 && bytes[at + 3] === 0x31;
  if (!magic(0) || !magic(n - 4)) fail('missing PAR1 magic');
  const footerLen = new DataView(bytes.buffer, bytes.byteOffset, n).getUint32(n - 8, true);
  const footerStart = n - 8 - footerLen;
  if (footerLen === 0 || footerStart < 4) fail(`footer length ${footerLen} out of range for a ${n}-byte file`);
  const { value: fm, end } = readStruct(bytes, footerStart, n - 8);
  if (end !== n - 8) fail(`footer ends at ${end}, expected ${n - 8}`);

  const schema = list(fm[2], 'schema').map((e, i) => struct(e, `schema element ${i}`));
  if (schema.length === 0) fail('empty schema');
  const rootChildren = int(schema[0]!, 5, 'root num_children', true) ?? 0;
  // The schema tree (pre-order, `num_children` per group). Groups appear only for ARRAY/MAP
  // columns (nested.ts); leaves get their path and max definition/repetition levels.
  const leaves: LeafSchema[] = [];
  let next = 1;
  const node = (path: string[], def: number, repDepth: number, depth: number): SchemaNode => {
    if (next >= schema.length) fail(`schema lists fewer elements than its groups claim`);
    if (depth > 32) fail('schema nests too deeply');
    const e = schema[next++]!;
    const name = str(e[4], 'column name');
    const rep = int(e, 3, `repetition of '${name}'`, true) ?? 0;
    if (rep !== 0 && rep !== 1 && rep !== 2) fail(`column '${name}': repetition ${rep}`);
    const d = def + (rep === 0 ? 0 : 1);
    const r = repDepth + (rep === 2 ? 1 : 0);
    const p = [...path, name];
    const children = int(e, 5, `num_children of '${name}'`, true);
    const converted = int(e, 6, `converted_type of '${name}'`, true);
    if (children !== undefined && children > 0) {
      const g: SchemaNode = { name, repetition: rep, children: [] };
      if (converted !== undefined) g.converted = converted;
      if (e[10] !== undefined) g.logicalId = Number(Object.keys(struct(e[10], 'logicalType'))[0]);
      for (let k = 0; k < children; k++) g.children!.push(node(p, d, r, depth + 1));
      return g;
    }
    if (path.length === 0 && rep === 2) throw notSupported(`Parquet: repeated column '${name}' is not supported`);
    const physical = int(e, 1, `type of '${name}'`);
    if (physical < 0 || physical > 7) fail(`column '${name}': physical type ${physical}`);
    const leaf: LeafSchema = { name, physical, required: rep === 0 };
    if (path.length > 0) {
      leaf.path = p;
      leaf.maxDef = d;
      leaf.maxRep = r;
    }
    const opt = (id: number, what: string): number | undefined => int(e, id, `${what} of '${name}'`, true);
    const typeLength = opt(2, 'type_length');
    if (typeLength !== undefined) leaf.typeLength = typeLength;
    if (converted !== undefined) leaf.converted = converted;
    const scale = opt(7, 'scale');
    if (scale !== undefined) leaf.scale = scale;
    const precision = opt(8, 'precision');
    if (precision !== undefined) leaf.precision = precision;
    const fieldId = opt(9, 'field_id');
    if (fieldId !== undefined) leaf.fieldId = fieldId;
    const l = logical(e[10]);
    if (l) leaf.logical = l;
    leaves.push(leaf);
    return { name, repetition: rep, leafIndex: leaves.length - 1 };
  };
  const fields: SchemaNode[] = [];
  for (let k = 0; k < rootChildren; k++) fields.push(node([], 0, 0, 0));
  if (next !== schema.length) fail(`root has ${rootChildren} children, schema lists ${schema.length - 1} elements`);

  const numRows = int(fm, 3, 'num_rows');
  const rowGroups = list(fm[4], 'row_groups').map((g, gi) => {
    const rg = struct(g, `row group ${gi}`);
    const rows = int(rg, 3, `row group ${gi} num_rows`);
    const cols = list(rg[1], `row group ${gi} columns`);
    if (cols.length !== leaves.length) fail(`row group ${gi} has ${cols.length} chunks for ${leaves.length} columns`);
    const chunks = cols.map((c, ci): ChunkMeta => {
      const what = `row group ${gi} column '${leaves[ci]!.name}'`;
      const cc = struct(c, what);
      if (cc[1] !== undefined) throw notSupported(`Parquet: ${what} is stored in another file`);
      const md = struct(cc[3], `${what} meta_data`);
      const physical = int(md, 1, `${what} type`);
      if (physical !== leaves[ci]!.physical) fail(`${what}: chunk type ${physical} differs from the schema's ${leaves[ci]!.physical}`);
      const path = list(md[3], `${what} path`).map((p) => str(p, `${what} path`));
      if (path.join('.') !== (leaves[ci]!.path ?? [leaves[ci]!.name]).join('.')) fail(`${what}: path_in_schema is ${path.join('.')}`);
      const dataOff = int(md, 9, `${what} data_page_offset`);
      const dictOff = int(md, 11, `${what} dictionary_page_offset`, true);
      const start = dictOff !== undefined && dictOff >= 4 && dictOff < dataOff ? dictOff : dataOff;
      const totalCompressed = int(md, 7, `${what} total_compressed_size`);
      if (start < 4 || totalCompressed <= 0 || start + totalCompressed > footerStart) {
        fail(`${what}: bytes [${start}, ${start + totalCompressed}) outside the column data [4, ${footerStart})`);
      }
      const numValues = int(md, 5, `${what} num_values`);
      // Leaves under a repeated group hold one value per entry, not per row (checked while reading).
      if (numValues !== rows && !leaves[ci]!.maxRep) fail(`${what}: ${numValues} values in a row group of ${rows} rows`);
      return { physical, codec: int(md, 4, `${what} codec`), numValues, totalCompressed, start };
    });
    return { numRows: rows, chunks };
  });
  let sum = 0;
  for (const g of rowGroups) {
    if (g.numRows < 0) fail('negative row count');
    sum += g.numRows;
  }
  if (sum !== numRows) fail(`row groups hold ${sum} rows, footer says ${numRows}`);
  const meta: FileMeta = { numRows, leaves, rowGroups, fields };
  if (fm[6] instanceof Uint8Array) meta.createdBy = DEC.decode(fm[6]);
  return meta;
}
