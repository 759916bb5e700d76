// Avro data files (paimon-format.md §7 "Avro data files", §5.1 derivation rules): a data file's
// row type as a bare top-level record `org.apache.paimon.avro.generated.record`, written and read
// column-major without building one object per row (avsc would; level 0 in Avro exists to make
// flushes cheap, so this path is hand-written).
//
// Type mapping (AvroSchemaConverter): nullable ⇒ ["null", T] with default null; BOOLEAN→boolean;
// TINYINT/SMALLINT/INT→int; BIGINT→long; FLOAT→float; DOUBLE→double; CHAR/VARCHAR/STRING→string;
// BINARY/VARBINARY/BYTES→bytes; DECIMAL→bytes+decimal(p,s) (big-endian two's complement);
// DATE→int+date; TIME→int+time-millis; TIMESTAMP(p≤3)→long+timestamp-millis, (p≤6)→
// timestamp-micros; TIMESTAMP WITH LOCAL TIME ZONE→local-timestamp-millis|micros (as the Java
// fixture shows). Container: magic, metadata (avro.schema, avro.codec), 16-byte sync, blocks.
// Codecs: write null, deflate, snappy; read also zstandard.
//
// Reading uses the writer schema from the header and maps fields BY NAME (as Java does): a
// requested column missing from the file reads as null, extra file fields are skipped; a top-level
// ["null", record] union (old writers) is accepted. Timestamps are scaled by the file's logical type.
// Invariants: corrupt framing, sync mismatch, short blocks or records running past their block
// are a Corruption of `path`.

import { randomBytes } from 'node:crypto';
import { bigintFromBytes, bigintToMinimalBytes } from '../binary-row.ts';
import { corruption, LsmError } from '../errors.ts';
import { avroBlockFrame, avroHeader, compressAvroBlock, In, Out, readAvroBlock, readAvroBlockFrame, readAvroHeader, type AvroWriteCodec } from './avro-block.ts';
import type { DataType } from '../types.ts';
import { isNestedAvroSchema, nestedAvroDecoder, nestedAvroSkipper, nestedAvroType, nestedAvroWriter } from './avro-nested.ts';

export interface AvroDataColumn {
  name: string;
  type: DataType;
  /** BIGINT → JS number instead of bigint (for _SEQUENCE_NUMBER). */
  asNumber?: boolean;
}
export type AvroDataCodec = AvroWriteCodec;

/** Java's DataFileConstants.DEFAULT_SYNC_INTERVAL. */
const SYNC_INTERVAL = 64000;

// ---------------------------------------------------------------------------------------------
// Schema.

export function avroFieldType(t: DataType, recordName = 'record'): unknown {
  switch (t.root) {
    case 'ARRAY':
    case 'MAP':
      return nestedAvroType(t, recordName); // avro-nested.ts
    case 'BOOLEAN':
      return 'boolean';
    case 'TINYINT':
    case 'SMALLINT':
    case 'INT':
      return 'int';
    case 'BIGINT':
      return 'long';
    case 'FLOAT':
      return 'float';
    case 'DOUBLE':
      return 'double';
    case 'CHAR':
    case 'VARCHAR':
    case 'STRING':
      return 'string';
    case 'BINARY':
    case 'VARBINARY':
    case 'BYTES':
      return 'bytes';
    case 'DECIMAL':
      return { type: 'bytes', logicalType: 'decimal', precision: t.precision, scale: t.scale };
    case 'DATE':
      return { type: 'int', logicalType: 'date' };
    case 'TIME':
      return { type: 'int', logicalType: 'time-millis' };
    case 'TIMESTAMP':
      return { type: 'long', logicalType: t.precision! <= 3 ? 'timestamp-millis' : 'timestamp-micros' };
    case 'TIMESTAMP_LTZ':
      return { type: 'long', logicalType: t.precision! <= 3 ? 'local-timestamp-millis' : 'local-timestamp-micros' };
  }
}

/** The Avro record schema Paimon derives for these columns. */
export function avroDataSchema(columns: readonly AvroDataColumn[]): object {
  return {
    type: 'record',
    name: 'record',
    namespace: 'org.apache.paimon.avro.generated',
    fields: columns.map((c) => {
      const t = avroFieldType(c.type, `record_${c.name}`);
      return c.type.nullable ? { name: c.name, type: ['null', t], default: null } : { name: c.name, type: t };
    }),
  };
}

// ---------------------------------------------------------------------------------------------
// Writing.

export type ValueWriter = (o: Out, v: unknown) => void;

export function valueWriter(t: DataType): ValueWriter {
  switch (t.root) {
    case 'ARRAY':
    case 'MAP':
      return nestedAvroWriter(t); // avro-nested.ts
    case 'BOOLEAN':
      return (o, v) => {
        o.ensure(1);
        o.buf[o.pos++] = v ? 1 : 0;
      };
    case 'TINYINT':
    case 'SMALLINT':
    case 'INT':
    case 'DATE':
    case 'TIME':
      return (o, v) => o.long(v as number);
    case 'BIGINT':
      return (o, v) => (typeof v === 'bigint' ? o.bigLong(v) : o.long(v as number));
    case 'FLOAT':
      return (o, v) => {
        o.ensure(4);
        o.buf.writeFloatLE(v as number, o.pos);
        o.pos += 4;
      };
    case 'DOUBLE':
      return (o, v) => {
        o.ensure(8);
        o.buf.writeDoubleLE(v as number, o.pos);
        o.pos += 8;
      };
    case 'CHAR':
    case 'VARCHAR':
    case 'STRING':
      return (o, v) => o.string(v as string);
    case 'BINARY':
    case 'VARBINARY':
    case 'BYTES':
      return (o, v) => o.bytes(v as Uint8Array);
    case 'DECIMAL':
      return (o, v) => {
        const b = v as bigint;
        if (b >= -140737488355328n && b < 140737488355328n) {
          // ≤ 6 bytes: Java's BigInteger.toByteArray (minimal two's complement) without a bigint loop.
          let n = Number(b);
          let len = 1;
          while (len < 6 && (n < -(2 ** (8 * len - 1)) || n >= 2 ** (8 * len - 1))) len++;
          o.long(len);
          o.ensure(len);
          if (n < 0) n += 2 ** (8 * len);
          for (let k = len - 1; k >= 0; k--) {
            o.buf[o.pos + k] = n % 256;
            n = Math.floor(n / 256);
          }
          o.pos += len;
          return;
        }
        o.bytes(bigintToMinimalBytes(b));
      };
    case 'TIMESTAMP':
    case 'TIMESTAMP_LTZ':
      if (t.precision! <= 3) return (o, v) => o.long(Math.floor((v as number) / 1000));
      return (o, v) => o.long(v as number);
  }
}

/** values[c][r], in-memory values per types.ts. Returns the complete container file. */
export function writeAvroData(columns: readonly AvroDataColumn[], values: readonly unknown[][], rowCount: number, codec: AvroDataCodec): Uint8Array {
  const sync = randomBytes(16);
  const parts: Uint8Array[] = [avroHeader(avroDataSchema(columns), codec, sync)];
  const writers = columns.map((c) => valueWriter(c.type));
  const nullable = columns.map((c) => c.type.nullable);
  const nc = columns.length;
  const block = new Out(SYNC_INTERVAL + 4096);
  let inBlock = 0;
  const flush = () => {
    if (inBlock === 0) return;
    const data = compressAvroBlock(codec, block.buf.subarray(0, block.pos));
    parts.push(avroBlockFrame(inBlock, data.length), codec === 'null' ? Buffer.from(data) : data, sync);
    block.pos = 0;
    inBlock = 0;
  };
  for (let r = 0; r < rowCount; r++) {
    for (let c = 0; c < nc; c++) {
      const v = values[c]![r];
      if (nullable[c]) {
        block.ensure(1);
        if (v === null || v === undefined) {
          block.buf[block.pos++] = 0;
          continue;
        }
        block.buf[block.pos++] = 2; // union branch 1, zigzag
      } else if (v === null || v === undefined) {
        throw new LsmError('InvalidArgument', `Avro data file: column '${columns[c]!.name}' is NOT NULL but row ${r} holds null`);
      }
      writers[c]!(block, v);
    }
    inBlock++;
    if (block.pos >= SYNC_INTERVAL) flush();
  }
  flush();
  return new Uint8Array(Buffer.concat(parts));
}

// ---------------------------------------------------------------------------------------------
// Reading.

export type Decoder = (i: In) => unknown;

export interface WriterField {
  name: string;
  /** The writer schema of the non-null branch when it is an array or a map. */
  nested?: unknown;
  /** The non-null branch's primitive and attributes. */
  prim: string;
  logical: string | undefined;
  size: number | undefined;
  /** Index of the null branch in a union, or -1 for a bare type. */
  nullBranch: number;
}

export function describeWriterField(raw: unknown, path: string): WriterField {
  const f = raw as { name?: unknown; type?: unknown };
  if (!f || typeof f.name !== 'string') throw corruption(path, 'Avro data: writer schema field without a name');
  let t = f.type;
  let nullBranch = -1;
  if (Array.isArray(t)) {
    if (t.length !== 2 || !t.includes('null')) {
      if (t.length === 1) t = t[0];
      else throw new LsmError('NotSupported', `Avro data: field '${f.name}' has a union other than [null, T]`, { path });
    } else {
      nullBranch = t.indexOf('null');
      t = t[1 - nullBranch];
    }
  }
  if (typeof t === 'string') return { name: f.name, prim: t, logical: undefined, size: undefined, nullBranch };
  if (isNestedAvroSchema(t)) return { name: f.name, prim: (t as { type: string }).type, logical: undefined, size: undefined, nullBranch, nested: t };
  const o = t as { type?: unknown; logicalType?: unknown; size?: unknown };
  if (!o || typeof o.type !== 'string') throw new LsmError('NotSupported', `Avro data: field '${f.name}' has a nested type, which is not supported`, { path });
  return { name: f.name, prim: o.type, logical: typeof o.logicalType === 'string' ? o.logicalType : undefined, size: typeof o.size === 'number' ? o.size : undefined, nullBranch };
}

/** Skips one value of the writer field's primitive type. */
export function skipper(w: WriterField, path: string): Decoder {
  if (w.nested !== undefined) return nestedAvroSkipper(w.nested, w.name, path);
  switch (w.prim) {
    case 'null':
      return () => null;
    case 'boolean':
      return (i) => i.take(1);
    case 'int':
    case 'long':
    case 'enum':
      return (i) => i.skipLong();
    case 'float':
      return (i) => i.take(4);
    case 'double':
      return (i) => i.take(8);
    case 'string':
    case 'bytes':
      return (i) => i.take(i.long());
    case 'fixed':
      return (i) => i.take(w.size ?? 0);
    default:
      throw new LsmError('NotSupported', `Avro data: field '${w.name}' of type '${w.prim}' is not supported`, { path });
  }
}

function timestampScale(w: WriterField, t: DataType): number {
  if (w.logical?.endsWith('-millis')) return 1000;
  if (w.logical?.endsWith('-micros')) return 1;
  return t.precision! <= 3 ? 1000 : 1;
}

/** Decodes a writer field into the in-memory value of the requested column. */
export function decoder(w: WriterField, col: AvroDataColumn, path: string): Decoder {
  const t = col.type;
  if (w.nested !== undefined || t.root === 'ARRAY' || t.root === 'MAP') return nestedAvroDecoder(w, t, path);
  const bad = () => new LsmError('NotSupported', `Avro data: field '${w.name}' is '${w.prim}' in the file, which cannot be read as ${t.root}`, { path });
  switch (w.prim) {
    case 'boolean':
      if (t.root !== 'BOOLEAN') throw bad();
      return (i) => i.b[i.take(1)] !== 0;
    case 'int':
      if (t.root === 'BIGINT') return col.asNumber ? (i) => i.long() : (i) => BigInt(i.long());
      return (i) => i.long();
    case 'long':
      if (t.root === 'TIMESTAMP' || t.root === 'TIMESTAMP_LTZ') {
        const scale = timestampScale(w, t);
        return scale === 1 ? (i) => i.long() : (i) => i.long() * scale;
      }
      if (t.root === 'BIGINT' && !col.asNumber) return (i) => i.bigLong();
      return (i) => i.long();
    case 'float':
      return (i) => i.b.readFloatLE(i.take(4));
    case 'double':
      return (i) => i.b.readDoubleLE(i.take(8));
    case 'string':
      return (i) => {
        const n = i.long();
        const at = i.take(n);
        return i.b.toString('utf8', at, at + n);
      };
    case 'bytes':
      if (t.root === 'DECIMAL') {
        return (i) => {
          const n = i.long();
          const at = i.take(n);
          if (n > 0 && n <= 6) {
            let v = i.b[at]! >= 0x80 ? i.b[at]! - 256 : i.b[at]!;
            for (let k = 1; k < n; k++) v = v * 256 + i.b[at + k]!;
            return BigInt(v);
          }
          return bigintFromBytes(i.b.subarray(at, at + n));
        };
      }
      if (t.root === 'STRING' || t.root === 'VARCHAR' || t.root === 'CHAR') {
        return (i) => {
          const n = i.long();
          const at = i.take(n);
          return i.b.toString('utf8', at, at + n);
        };
      }
      return (i) => {
        const n = i.long();
        const at = i.take(n);
        return new Uint8Array(i.b.subarray(at, at + n));
      };
    case 'fixed': {
      const size = w.size ?? 0;
      if (t.root === 'DECIMAL') return (i) => bigintFromBytes(i.b.subarray(i.take(size), i.pos));
      return (i) => new Uint8Array(i.b.subarray(i.take(size), i.pos));
    }
    default:
      throw bad();
  }
}

/**
 * Reads the requested columns (matched by name) of an Avro data file. values[c][r] in request
 * order; a column absent from the file is all nulls. With `expectRows` block headers that count
 * otherwise are a Corruption, found before any column is allocated.
 */
export function readAvroData(bytes: Uint8Array, request: readonly AvroDataColumn[], path: string, expectRows?: number): { rowCount: number; columns: unknown[][] } {
  const b = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const header = readAvroHeader(b, path, 'Avro data');
  const { codec, sync } = header;
  let schema = header.schema as { type?: unknown; fields?: unknown };
  const h = new In(b, b.length, path, 'Avro data');
  h.pos = header.dataStart;
  // Old writers wrap the record in ["null", record].
  let topUnion = -1;
  if (Array.isArray(schema)) {
    const arr = schema as unknown[];
    topUnion = arr.findIndex((x) => x !== 'null');
    schema = arr[topUnion] as typeof schema;
  }
  if (!schema || schema.type !== 'record' || !Array.isArray(schema.fields)) throw corruption(path, 'Avro data: writer schema is not a record');
  const writerFields = (schema.fields as unknown[]).map((f) => describeWriterField(f, path));
  const byName = new Map(request.map((c, i) => [c.name, i]));
  const steps = writerFields.map((w) => {
    const target = byName.get(w.name);
    return { target: target ?? -1, nullBranch: w.nullBranch, decode: target === undefined ? skipper(w, path) : decoder(w, request[target]!, path) };
  });
  // First pass over the block headers: the row count, so the columns are allocated once.
  const dataStart = h.pos;
  let total = 0;
  while (h.pos < b.length) {
    const { count, size } = readAvroBlockFrame(h);
    h.take(size + 16);
    total += count;
  }
  h.pos = dataStart;
  if (expectRows !== undefined && total !== expectRows) throw corruption(path, `Avro data: the block headers count ${total} records where ${expectRows} were expected`);
  // The block headers' counts are not checked until their blocks are decoded, so they size the
  // columns only up to the file's length (a record takes at least one byte; a file whose rows
  // compress below a byte each grows its columns past that as rows are written in order). A
  // column absent from the file is allocated at the end, by the rows actually decoded.
  const present = new Set(steps.filter((s) => s.target >= 0).map((s) => s.target));
  const presize = Math.min(total, b.length);
  const columns: unknown[][] = request.map((_, c) => (present.has(c) ? new Array(presize) : []));
  const nSteps = steps.length;
  const targets = steps.map((s) => s.target);
  const nullBranches = steps.map((s) => s.nullBranch);
  const decoders = steps.map((s) => s.decode);
  let rowCount = 0;
  while (h.pos < b.length) {
    const { count: n, data: raw } = readAvroBlock(h, codec, sync);
    // Every record takes at least one byte (a Paimon schema has a field, and every field type
    // takes a byte or more): more records than bytes is damage, refused before the loop.
    if (n > raw.length) throw corruption(path, `Avro data: a block claims ${n} records in ${raw.length} bytes`);
    const r = new In(raw, raw.length, path, 'Avro data');
    for (let k = 0; k < n; k++) {
      if (topUnion >= 0 && r.long() !== topUnion) throw corruption(path, 'Avro data: null top-level record');
      const row = rowCount + k;
      for (let f = 0; f < nSteps; f++) {
        let v: unknown;
        const nb = nullBranches[f]!;
        if (nb >= 0) {
          const branch = r.long();
          if (branch === nb) v = null;
          else if (branch === 1 - nb) v = decoders[f]!(r);
          else r.fail(`union branch ${branch} out of range`);
        } else v = decoders[f]!(r);
        const t = targets[f]!;
        if (t >= 0) columns[t]![row] = v;
      }
    }
    if (r.pos !== raw.length) throw corruption(path, `Avro data: block has ${raw.length - r.pos} bytes after its ${n} records`);
    rowCount += n;
  }
  if (rowCount !== total) throw corruption(path, `Avro data: ${rowCount} records, the block headers say ${total}`);
  for (let c = 0; c < request.length; c++) {
    if (!present.has(c)) columns[c] = new Array(rowCount).fill(null);
  }
  return { rowCount, columns };
}
