// Shared helpers of the Parquet codec's tests (not imported by production code): a seeded random
// generator, per-type value generators covering the edge cases, and hyparquet as the independent
// second reader.

import { parquetMetadata, parquetReadObjects } from 'hyparquet';
import { compressors } from 'hyparquet-compressors';
import { type DataType, parseType } from '../../types.ts';
import type { ParquetColumn } from './index.ts';

export function rng(seed: number): () => number {
  let s = seed >>> 0 || 1;
  return () => {
    s ^= s << 13;
    s >>>= 0;
    s ^= s >>> 17;
    s ^= s << 5;
    s >>>= 0;
    return s / 4294967296;
  };
}

export const ALL_TYPES = [
  'BOOLEAN',
  'TINYINT',
  'SMALLINT',
  'INT',
  'BIGINT',
  'FLOAT',
  'DOUBLE',
  'STRING',
  'VARCHAR(20)',
  'CHAR(3)',
  'BYTES',
  'BINARY(4)',
  'DATE',
  'TIME(3)',
  'TIMESTAMP(3)',
  'TIMESTAMP(6)',
  'TIMESTAMP(0) WITH LOCAL TIME ZONE',
  'TIMESTAMP(6) WITH LOCAL TIME ZONE',
  'DECIMAL(9, 2)',
  'DECIMAL(18, 4)',
  'DECIMAL(19, 0)',
  'DECIMAL(38, 10)',
];

const EDGE: Record<string, unknown[]> = {
  BOOLEAN: [true, false],
  TINYINT: [-128, 127, 0],
  SMALLINT: [-32768, 32767],
  INT: [-2147483648, 2147483647, 0, -1],
  BIGINT: [-(2n ** 63n), 2n ** 63n - 1n, 0n, -1n],
  FLOAT: [0, -0, 1.5, -3.25, Infinity, -Infinity, Math.fround(3.4e38)],
  DOUBLE: [0, -0, Number.MAX_VALUE, -Number.MIN_VALUE, Infinity, -Infinity, 0.1],
  STRING: ['', 'a', 'héllo wörld', '日本語', '😀 emoji', 'x'.repeat(300), '\u0000nul'],
  VARCHAR: ['', 'abc'],
  CHAR: ['', 'abc'],
  BYTES: [new Uint8Array(0), Uint8Array.of(0, 255, 128), new Uint8Array(200).fill(7)],
  BINARY: [new Uint8Array(0), Uint8Array.of(1, 2, 3, 4)],
  DATE: [0, -719162, 2932896, -1],
  TIME: [0, 86_399_999],
  TIMESTAMP: [0, -1000, -9007199254740000, 9007199254740000, 1700000000123000],
  TIMESTAMP_LTZ: [0, -1000, 1700000000000000],
};

function decimalEdge(t: DataType): unknown[] {
  const max = 10n ** BigInt(t.precision!) - 1n;
  return [0n, max, -max, -1n, 1n];
}

/** One random (or edge-case) in-memory value of `t`. */
export function randomValue(t: DataType, r: () => number, row: number): unknown {
  if (t.nullable && r() < 0.15) return null;
  const edges = t.root === 'DECIMAL' ? decimalEdge(t) : EDGE[t.root]!;
  if (row < edges.length * 2 && r() < 0.5) return edges[row % edges.length];
  const int = (lo: number, hi: number): number => lo + Math.floor(r() * (hi - lo + 1));
  switch (t.root) {
    case 'BOOLEAN':
      return r() < 0.5;
    case 'TINYINT':
      return int(-128, 127);
    case 'SMALLINT':
      return int(-32768, 32767);
    case 'INT':
      return int(-2147483648, 2147483647);
    case 'DATE':
      return int(-719162, 2932896);
    case 'TIME':
      return int(0, 86_399_999);
    case 'BIGINT':
      return BigInt.asIntN(64, (BigInt(int(0, 2 ** 31)) << 33n) ^ BigInt(int(-(2 ** 31), 2 ** 31)));
    case 'FLOAT':
      return Math.fround((r() - 0.5) * 1e6);
    case 'DOUBLE':
      return (r() - 0.5) * 1e12;
    case 'STRING':
    case 'VARCHAR':
    case 'CHAR': {
      const n = int(0, t.root === 'STRING' ? 30 : Math.min(3, t.length ?? 3));
      let s = '';
      for (let i = 0; i < n; i++) s += r() < 0.9 ? String.fromCharCode(int(32, 126)) : String.fromCodePoint(int(0xa0, 0x2fff));
      return s.length > (t.length ?? Infinity) ? s.slice(0, t.length) : s;
    }
    case 'BYTES':
    case 'BINARY': {
      const n = int(0, t.root === 'BINARY' ? t.length! : 20);
      return Uint8Array.from({ length: n }, () => int(0, 255));
    }
    case 'TIMESTAMP':
    case 'TIMESTAMP_LTZ': {
      const v = int(-4e15, 4e15);
      return t.precision! <= 3 ? Math.floor(v / 1000) * 1000 : v;
    }
    case 'DECIMAL': {
      const max = 10n ** BigInt(t.precision!);
      let v = 0n;
      for (let i = 0; i < t.precision!; i++) v = v * 10n + BigInt(int(0, 9));
      v %= max;
      return r() < 0.5 ? -v : v;
    }
    default:
      throw new Error(`no generator for ${t.root}`);
  }
}

export function typedColumns(types: string[], nullable: boolean): ParquetColumn[] {
  return types.map((s, i) => {
    const t = parseType(nullable ? s : `${s} NOT NULL`);
    return { name: `c${i}_${t.root.toLowerCase()}`, fieldId: i * 3 + 1, type: t };
  });
}

export function generate(columns: ParquetColumn[], rows: number, seed: number): unknown[][] {
  const r = rng(seed);
  return columns.map((c) => Array.from({ length: rows }, (_, i) => randomValue(c.type, r, i)));
}

function toArrayBuffer(b: Uint8Array): ArrayBuffer {
  return b.buffer.slice(b.byteOffset, b.byteOffset + b.length) as ArrayBuffer;
}

export async function hyparquetRows(bytes: Uint8Array, utf8 = true): Promise<Record<string, unknown>[]> {
  return (await parquetReadObjects({ file: toArrayBuffer(bytes), compressors, utf8 })) as Record<string, unknown>[];
}

export function hyparquetMeta(bytes: Uint8Array): ReturnType<typeof parquetMetadata> {
  return parquetMetadata(toArrayBuffer(bytes));
}

/** Whether hyparquet's value `h` stands for our in-memory value `v` of type `t`. */
export function sameAsHyparquet(t: DataType, v: unknown, h: unknown): boolean {
  if (v === null) return h === null || h === undefined;
  switch (t.root) {
    case 'DATE':
      return h instanceof Date && h.getTime() === (v as number) * 86_400_000;
    case 'TIMESTAMP':
    case 'TIMESTAMP_LTZ':
      return h instanceof Date && Math.abs(h.getTime() - (v as number) / 1000) <= 1;
    case 'DECIMAL': {
      const want = Number(v as bigint) / 10 ** t.scale!;
      return typeof h === 'number' && (h === want || Math.abs(h - want) <= Math.abs(want) * 1e-12);
    }
    case 'BYTES':
    case 'BINARY':
    case 'VARBINARY':
      return h instanceof Uint8Array && Buffer.compare(Buffer.from(h), Buffer.from(v as Uint8Array)) === 0;
    case 'FLOAT':
    case 'DOUBLE':
      return Object.is(h, v) || (h === 0 && v === 0);
    default:
      return h === v;
  }
}
