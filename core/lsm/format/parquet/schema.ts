// Paimon type ↔ Parquet leaf column: the mapping Java Paimon's ParquetSchemaConverter produces
// (physical type, ConvertedType and LogicalType as parquet-mr writes them), and the enums of
// parquet.thrift that the writer and reader share.
//
// Invariants: only flat leaves (REQUIRED/OPTIONAL primitives). TIMESTAMP precision ≤ 3 stores
// epoch milliseconds, ≤ 6 microseconds. DECIMAL stores the unscaled value: INT32 for precision
// ≤ 9, INT64 for ≤ 18, else FIXED_LEN_BYTE_ARRAY of the minimal two's-complement width.

import type { DataType } from '../../types.ts';
import { notSupported } from '../../errors.ts';

export enum Physical {
  BOOLEAN = 0,
  INT32 = 1,
  INT64 = 2,
  INT96 = 3,
  FLOAT = 4,
  DOUBLE = 5,
  BYTE_ARRAY = 6,
  FIXED_LEN_BYTE_ARRAY = 7,
}
export const PHYSICAL_NAMES = ['BOOLEAN', 'INT32', 'INT64', 'INT96', 'FLOAT', 'DOUBLE', 'BYTE_ARRAY', 'FIXED_LEN_BYTE_ARRAY'];

export enum Converted {
  UTF8 = 0,
  DECIMAL = 5,
  DATE = 6,
  TIME_MILLIS = 7,
  TIME_MICROS = 8,
  TIMESTAMP_MILLIS = 9,
  TIMESTAMP_MICROS = 10,
  INT_8 = 15,
  INT_16 = 16,
  INT_32 = 17,
  INT_64 = 18,
}

export enum Enc {
  PLAIN = 0,
  PLAIN_DICTIONARY = 2,
  RLE = 3,
  BIT_PACKED = 4,
  DELTA_BINARY_PACKED = 5,
  DELTA_LENGTH_BYTE_ARRAY = 6,
  DELTA_BYTE_ARRAY = 7,
  RLE_DICTIONARY = 8,
  BYTE_STREAM_SPLIT = 9,
}

export enum Codec {
  UNCOMPRESSED = 0,
  SNAPPY = 1,
  GZIP = 2,
  LZO = 3,
  BROTLI = 4,
  LZ4 = 5,
  ZSTD = 6,
  LZ4_RAW = 7,
}
export const CODEC_NAMES = ['UNCOMPRESSED', 'SNAPPY', 'GZIP', 'LZO', 'BROTLI', 'LZ4', 'ZSTD', 'LZ4_RAW'];

export enum PageType {
  DATA_PAGE = 0,
  INDEX_PAGE = 1,
  DICTIONARY_PAGE = 2,
  DATA_PAGE_V2 = 3,
}

export type TimeUnit = 'MILLIS' | 'MICROS' | 'NANOS';

/** The LogicalType union of parquet.thrift, as far as this codec writes or reads it. */
export type Logical =
  | { kind: 'STRING' }
  | { kind: 'DATE' }
  | { kind: 'INTEGER'; bitWidth: number; signed: boolean }
  | { kind: 'DECIMAL'; precision: number; scale: number }
  | { kind: 'TIME'; utc: boolean; unit: TimeUnit }
  | { kind: 'TIMESTAMP'; utc: boolean; unit: TimeUnit }
  | { kind: 'OTHER'; id: number };

/** One leaf of the Parquet schema. */
export interface LeafSchema {
  name: string;
  fieldId?: number;
  physical: Physical;
  required: boolean;
  typeLength?: number;
  converted?: number;
  logical?: Logical;
  scale?: number;
  precision?: number;
  /** Leaves of nested (ARRAY/MAP) columns: the path from the root, max definition/repetition levels (nested.ts). */
  path?: string[];
  maxDef?: number;
  maxRep?: number;
}

/** parquet-mr's `computeMinBytesForDecimalPrecision`: bytes of a two's complement holding 10^p − 1. */
export function decimalBytes(precision: number): number {
  let n = 1;
  while (2n ** BigInt(8 * n - 1) < 10n ** BigInt(precision)) n++;
  return n;
}

/** The Parquet leaf Java Paimon writes for a column of type `t`. */
export function leafFor(name: string, fieldId: number, t: DataType): LeafSchema {
  const base = { name, fieldId, required: !t.nullable };
  switch (t.root) {
    case 'BOOLEAN':
      return { ...base, physical: Physical.BOOLEAN };
    case 'TINYINT':
    case 'SMALLINT': {
      const bits = t.root === 'TINYINT' ? 8 : 16;
      return {
        ...base,
        physical: Physical.INT32,
        converted: bits === 8 ? Converted.INT_8 : Converted.INT_16,
        logical: { kind: 'INTEGER', bitWidth: bits, signed: true },
      };
    }
    case 'INT':
      return { ...base, physical: Physical.INT32 };
    case 'BIGINT':
      return { ...base, physical: Physical.INT64 };
    case 'FLOAT':
      return { ...base, physical: Physical.FLOAT };
    case 'DOUBLE':
      return { ...base, physical: Physical.DOUBLE };
    case 'CHAR':
    case 'VARCHAR':
    case 'STRING':
      return { ...base, physical: Physical.BYTE_ARRAY, converted: Converted.UTF8, logical: { kind: 'STRING' } };
    case 'BINARY':
    case 'VARBINARY':
    case 'BYTES':
      return { ...base, physical: Physical.BYTE_ARRAY };
    case 'DATE':
      return { ...base, physical: Physical.INT32, converted: Converted.DATE, logical: { kind: 'DATE' } };
    case 'TIME':
      return {
        ...base,
        physical: Physical.INT32,
        converted: Converted.TIME_MILLIS,
        logical: { kind: 'TIME', utc: true, unit: 'MILLIS' },
      };
    case 'TIMESTAMP':
    case 'TIMESTAMP_LTZ': {
      const p = t.precision ?? 6;
      if (p > 6) throw notSupported(`Parquet: TIMESTAMP precision ${p} (INT96) is not supported for writing`);
      const millis = p <= 3;
      return {
        ...base,
        physical: Physical.INT64,
        converted: millis ? Converted.TIMESTAMP_MILLIS : Converted.TIMESTAMP_MICROS,
        logical: { kind: 'TIMESTAMP', utc: t.root === 'TIMESTAMP_LTZ', unit: millis ? 'MILLIS' : 'MICROS' },
      };
    }
    case 'DECIMAL': {
      const precision = t.precision ?? 10;
      const scale = t.scale ?? 0;
      const deco = {
        converted: Converted.DECIMAL,
        logical: { kind: 'DECIMAL', precision, scale } as Logical,
        precision,
        scale,
      };
      if (precision <= 9) return { ...base, ...deco, physical: Physical.INT32 };
      if (precision <= 18) return { ...base, ...deco, physical: Physical.INT64 };
      return { ...base, ...deco, physical: Physical.FIXED_LEN_BYTE_ARRAY, typeLength: decimalBytes(precision) };
    }
    case 'ARRAY':
    case 'MAP':
      throw notSupported(`Parquet: ${t.root} column '${name}' is not a leaf (nested.ts writes it)`);
  }
}

/** Human-readable logical annotation, for `readParquetFooter`. */
export function describeLogical(l: Logical | undefined, converted: number | undefined): string | undefined {
  if (l) {
    switch (l.kind) {
      case 'STRING':
      case 'DATE':
        return l.kind;
      case 'INTEGER':
        return `INT(${l.bitWidth},${l.signed})`;
      case 'DECIMAL':
        return `DECIMAL(${l.precision},${l.scale})`;
      case 'TIME':
      case 'TIMESTAMP':
        return `${l.kind}(${l.unit},${l.utc})`;
      case 'OTHER':
        return `LOGICAL#${l.id}`;
    }
  }
  if (converted === undefined) return undefined;
  const names: Record<number, string> = {
    0: 'UTF8',
    5: 'DECIMAL',
    6: 'DATE',
    7: 'TIME_MILLIS',
    8: 'TIME_MICROS',
    9: 'TIMESTAMP_MILLIS',
    10: 'TIMESTAMP_MICROS',
    15: 'INT_8',
    16: 'INT_16',
    17: 'INT_32',
    18: 'INT_64',
  };
  return names[converted] ?? `CONVERTED#${converted}`;
}
