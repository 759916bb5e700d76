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
import { crc32, deflateRawSync, inflateRawSync } from 'node:zlib';
import { bigintFromBytes, bigintToMinimalBytes } from '../binary-row.ts';
import { corruption, LsmError, notSupported } from '../errors.ts';
import type { DataType } from '../types.ts';
import { isNestedAvroSchema, nestedAvroDecoder, nestedAvroSkipper, nestedAvroType, nestedAvroWriter } from './avro-nested.ts';
import { zstdDecompressBounded } from './parquet/compression.ts';
import { snappyCompress, snappyUncompressRaw } from './parquet/snappy.ts';

export interface AvroDataColumn {
  name: string;
  type: DataType;
  /** BIGINT → JS number instead of bigint (for _SEQUENCE_NUMBER). */
  asNumber?: boolean;
}
export type AvroDataCodec = 'null' | 'deflate' | 'snappy';

const MAGIC = [0x4f, 0x62, 0x6a, 0x01];
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

export class Out {
  buf: Buffer;
  pos = 0;
  constructor(size: number) {
    this.buf = Buffer.allocUnsafe(size);
  }
  ensure(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    const next = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.pos + n));
    this.buf.copy(next, 0, 0, this.pos);
    this.buf = next;
  }
  /** Zigzag varint of a safe integer. */
  long(n: number): void {
    this.ensure(10);
    const b = this.buf;
    let p = this.pos;
    if (n >= -0x40000000 && n < 0x40000000) {
      let z = ((n << 1) ^ (n >> 31)) >>> 0;
      while (z >= 0x80) {
        b[p++] = (z & 0x7f) | 0x80;
        z >>>= 7;
      }
      b[p++] = z;
    } else {
      let z = n >= 0 ? n * 2 : -n * 2 - 1;
      while (z >= 0x80) {
        b[p++] = (z % 128) | 0x80;
        z = Math.floor(z / 128);
      }
      b[p++] = z;
    }
    this.pos = p;
  }
  bigLong(v: bigint): void {
    if (v > -4503599627370496n && v < 4503599627370496n) return this.long(Number(v));
    this.ensure(10);
    let z = v >= 0n ? v << 1n : (-v << 1n) - 1n;
    while (z >= 0x80n) {
      this.buf[this.pos++] = Number(z & 0x7fn) | 0x80;
      z >>= 7n;
    }
    this.buf[this.pos++] = Number(z);
  }
  bytes(b: Uint8Array): void {
    this.long(b.length);
    this.ensure(b.length);
    this.buf.set(b, this.pos);
    this.pos += b.length;
  }
  string(s: string): void {
    if (s.length <= 21) {
      // ≤ 63 UTF-8 bytes: the zigzag length fits one byte; write the text first, then its length.
      this.ensure(64);
      const n = this.buf.write(s, this.pos + 1, 'utf8');
      this.buf[this.pos] = n << 1;
      this.pos += n + 1;
      return;
    }
    const n = Buffer.byteLength(s, 'utf8');
    this.long(n);
    this.ensure(n);
    this.buf.write(s, this.pos, n, 'utf8');
    this.pos += n;
  }
}

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

function compressBlock(codec: AvroDataCodec, data: Uint8Array): Uint8Array {
  switch (codec) {
    case 'null':
      return data;
    case 'deflate':
      return new Uint8Array(deflateRawSync(data));
    case 'snappy': {
      const c = snappyCompress(data);
      const out = new Uint8Array(c.length + 4);
      out.set(c);
      new DataView(out.buffer).setUint32(c.length, crc32(data) >>> 0, false);
      return out;
    }
    default:
      throw notSupported(`Avro data files: cannot write codec '${codec as string}'; use snappy, deflate or null`);
  }
}

function headerBytes(schema: object, codec: string, sync: Uint8Array): Buffer {
  const o = new Out(1024);
  o.ensure(4);
  for (const m of MAGIC) o.buf[o.pos++] = m;
  o.long(2);
  o.string('avro.schema');
  o.bytes(Buffer.from(JSON.stringify(schema)));
  o.string('avro.codec');
  o.bytes(Buffer.from(codec));
  o.long(0);
  o.ensure(16);
  o.buf.set(sync, o.pos);
  o.pos += 16;
  return o.buf.subarray(0, o.pos);
}

/** values[c][r], in-memory values per types.ts. Returns the complete container file. */
export function writeAvroData(columns: readonly AvroDataColumn[], values: readonly unknown[][], rowCount: number, codec: AvroDataCodec): Uint8Array {
  const sync = randomBytes(16);
  const parts: Uint8Array[] = [headerBytes(avroDataSchema(columns), codec, sync)];
  const writers = columns.map((c) => valueWriter(c.type));
  const nullable = columns.map((c) => c.type.nullable);
  const nc = columns.length;
  const block = new Out(SYNC_INTERVAL + 4096);
  let inBlock = 0;
  const frame = new Out(32);
  const flush = () => {
    if (inBlock === 0) return;
    const data = compressBlock(codec, block.buf.subarray(0, block.pos));
    frame.pos = 0;
    frame.long(inBlock);
    frame.long(data.length);
    parts.push(Buffer.from(frame.buf.subarray(0, frame.pos)), codec === 'null' ? Buffer.from(data) : data, sync);
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

export class In {
  pos = 0;
  constructor(
    readonly b: Buffer,
    readonly end: number,
    readonly path: string,
  ) {}
  fail(what: string): never {
    throw corruption(this.path, `Avro data: ${what}`);
  }
  /** Zigzag varint as a number (exact up to 2^53). */
  long(): number {
    const b = this.b;
    let p = this.pos;
    let byte = b[p++]!;
    if (p > this.end) this.fail('record runs past its block');
    if (byte < 0x80) {
      this.pos = p;
      return byte & 1 ? -((byte + 1) >>> 1) : byte >>> 1;
    }
    let n = byte & 0x7f;
    let mul = 128;
    for (let i = 1; i < 10; i++) {
      if (p >= this.end) this.fail('varint runs past its block');
      byte = b[p++]!;
      n += (byte & 0x7f) * mul;
      if (byte < 0x80) {
        this.pos = p;
        return n % 2 === 0 ? n / 2 : -(n + 1) / 2;
      }
      mul *= 128;
    }
    this.fail('varint longer than 10 bytes');
  }
  /** Zigzag varint as an exact bigint. */
  bigLong(): bigint {
    const start = this.pos;
    let z = 0n;
    let shift = 0n;
    for (let i = 0; i < 10; i++) {
      if (this.pos >= this.end) this.fail('varint runs past its block');
      const byte = this.b[this.pos++]!;
      z |= BigInt(byte & 0x7f) << shift;
      if (byte < 0x80) return z & 1n ? -((z + 1n) >> 1n) : z >> 1n;
      shift += 7n;
    }
    this.pos = start;
    this.fail('varint longer than 10 bytes');
  }
  take(n: number): number {
    const at = this.pos;
    if (n < 0 || at + n > this.end) this.fail(`value of ${n} bytes runs past its block`);
    this.pos = at + n;
    return at;
  }
}

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
      return (i) => i.long();
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

function decompressBlock(codec: string, data: Buffer, path: string): Buffer {
  try {
    switch (codec) {
      case 'null':
        return data;
      case 'deflate':
        return inflateRawSync(data);
      case 'snappy': {
        if (data.length < 4) throw new Error('block shorter than its CRC');
        // The uncompressed length is the snappy preamble, checked against the block's bytes.
        const out = snappyUncompressRaw(data.subarray(0, data.length - 4));
        if (crc32(out) >>> 0 !== data.readUInt32BE(data.length - 4)) throw corruption(path, 'Avro data: snappy block CRC32 mismatch');
        return Buffer.from(out.buffer, out.byteOffset, out.byteLength);
      }
      case 'zstandard': {
        const out = zstdDecompressBounded(data, Infinity);
        return Buffer.from(out.buffer, out.byteOffset, out.byteLength);
      }
      default:
        throw notSupported(`Avro codec '${codec}' in ${path} is not supported`);
    }
  } catch (e) {
    if (e instanceof LsmError) throw e;
    throw corruption(path, `Avro data: cannot decompress ${codec} block: ${(e as Error).message}`, e);
  }
}

/**
 * Reads the requested columns (matched by name) of an Avro data file. values[c][r] in request
 * order; a column absent from the file is all nulls.
 */
export function readAvroData(bytes: Uint8Array, request: readonly AvroDataColumn[], path: string): { rowCount: number; columns: unknown[][] } {
  const b = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (b.length < 4 || MAGIC.some((m, i) => b[i] !== m)) throw corruption(path, 'not an Avro container file (bad magic)');
  const h = new In(b, b.length, path);
  h.pos = 4;
  const meta = new Map<string, Buffer>();
  for (;;) {
    let count = h.long();
    if (count === 0) break;
    if (count < 0) {
      count = -count;
      h.long();
    }
    for (let k = 0; k < count; k++) {
      const kl = h.long();
      const key = b.toString('utf8', h.take(kl), h.pos);
      const vl = h.long();
      meta.set(key, b.subarray(h.take(vl), h.pos));
    }
  }
  const sync = b.subarray(h.take(16), h.pos);
  const schemaBytes = meta.get('avro.schema');
  if (!schemaBytes) throw corruption(path, 'Avro header has no avro.schema');
  const codec = meta.has('avro.codec') ? meta.get('avro.codec')!.toString('utf8') : 'null';
  let schema: { type?: unknown; fields?: unknown };
  try {
    schema = JSON.parse(schemaBytes.toString('utf8')) as typeof schema;
  } catch (e) {
    throw corruption(path, `bad Avro writer schema: ${(e as Error).message}`, e);
  }
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
    const n = h.long();
    const size = h.long();
    if (n < 0 || size < 0) throw corruption(path, `negative Avro block count ${n} or size ${size}`);
    h.take(size);
    h.take(16);
    total += n;
  }
  h.pos = dataStart;
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
    const n = h.long();
    const size = h.long();
    if (n < 0 || size < 0) throw corruption(path, `negative Avro block count ${n} or size ${size}`);
    const raw = decompressBlock(codec, b.subarray(h.take(size), h.pos), path);
    const marker = b.subarray(h.take(16), h.pos);
    if (!marker.equals(sync)) throw corruption(path, `Avro data: sync marker mismatch after the block at ${h.pos - 16 - size}`);
    // Every record takes at least one byte (a Paimon schema has a field, and every field type
    // takes a byte or more): more records than bytes is damage, refused before the loop.
    if (n > raw.length) throw corruption(path, `Avro data: a block claims ${n} records in ${raw.length} bytes`);
    const r = new In(raw, raw.length, path);
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
