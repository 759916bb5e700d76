// Avro object container files (Avro 1.11 spec, "Object Container Files"), synchronous, for Paimon's
// manifests, manifest lists and index manifests (paimon-format.md §5.1).
//
// Layout: 'Obj' 0x01 | metadata map<bytes> (avro.schema, avro.codec) | 16-byte sync marker |
//         blocks of { long recordCount, long byteSize, byteSize bytes of (compressed) records, sync }.
// Reading decodes every record with the WRITER schema from the header (Paimon readers match fields by
// name afterwards); unions are returned unwrapped (a `["null", T]` value is null or the T value).
// Codecs: null, deflate (raw RFC 1951), snappy (raw snappy + big-endian CRC32 of the uncompressed
// block), zstandard (read only, via fzstd). Writing: null, deflate, snappy.
// Invariants: a sync mismatch, a short block, a block whose records do not fill it exactly, or an
// undecodable record is a corruption of `path`; nothing here is asynchronous.

import { randomBytes } from 'node:crypto';
import { createRequire } from 'node:module';
import { crc32, deflateRawSync, inflateRawSync } from 'node:zlib';
import type * as Avsc from 'avsc';
import { corruption, invalidArgument, notSupported } from '../errors.ts';
import { zstdDecompressBounded } from './parquet/compression.ts';
import { snappyCompress, snappyUncompressRaw } from './parquet/snappy.ts';

// avsc is CommonJS without ESM named exports.
const require = createRequire(import.meta.url);
const avro = require('avsc') as typeof Avsc;

export type AvroWriteCodec = 'null' | 'deflate' | 'snappy';
export interface AvroContainer {
  /** The writer schema from the header, parsed. */
  schema: object;
  codec: string;
  records: unknown[];
}

const MAGIC = [0x4f, 0x62, 0x6a, 0x01];
/** Uncompressed bytes per block before a new one starts (Java's default sync interval is 64 KiB). */
const BLOCK_TARGET_BYTES = 64 * 1024;

const typeCache = new Map<string, Avsc.Type>();
/** avsc type for a schema (cached by its JSON); unions are never wrapped, logical types ignored. */
export function avroType(schema: object): Avsc.Type {
  const key = JSON.stringify(schema);
  let t = typeCache.get(key);
  if (!t) {
    t = avro.Type.forSchema(schema as Avsc.Schema, { wrapUnions: false });
    if (typeCache.size > 256) typeCache.clear();
    typeCache.set(key, t);
  }
  return t;
}

class Reader {
  pos = 0;
  constructor(
    readonly b: Uint8Array,
    readonly path: string,
  ) {}
  long(): number {
    let n = 0;
    let mul = 1;
    for (let i = 0; i < 10; i++) {
      if (this.pos >= this.b.length) throw corruption(this.path, 'Avro varint runs past the end of the file');
      const byte = this.b[this.pos++]!;
      n += (byte & 0x7f) * mul;
      if (!(byte & 0x80)) {
        if (n > Number.MAX_SAFE_INTEGER) throw corruption(this.path, 'Avro varint too large');
        return n % 2 === 0 ? n / 2 : -(n + 1) / 2;
      }
      mul *= 128;
    }
    throw corruption(this.path, 'Avro varint longer than 10 bytes');
  }
  bytes(n: number): Uint8Array {
    if (n < 0 || this.pos + n > this.b.length) throw corruption(this.path, `Avro block of ${n} bytes runs past the end of the file`);
    const out = this.b.subarray(this.pos, this.pos + n);
    this.pos += n;
    return out;
  }
  /**
   * Avro blocks of `what` (count, byte size when the count is negative, the items) until a zero
   * count; `each` reads one item. Every item read here takes at least one byte, so a block that
   * claims more items than bytes remain is damage (avsc would grow an array to that count).
   */
  blocks(what: string, each: () => void): void {
    for (;;) {
      let count = this.long();
      if (count === 0) return;
      if (count < 0) {
        count = -count;
        this.long();
      }
      if (count > this.b.length - this.pos) throw corruption(this.path, `an Avro ${what} block claims ${count} items in the ${this.b.length - this.pos} bytes left`);
      for (let k = 0; k < count; k++) each();
    }
  }
}

function writeLong(out: number[], v: number): void {
  let n = v >= 0 ? v * 2 : -v * 2 - 1;
  while (n >= 0x80) {
    out.push((n % 128) | 0x80);
    n = Math.floor(n / 128);
  }
  out.push(n);
}

function decompressBlock(codec: string, data: Uint8Array, path: string): Uint8Array {
  try {
    switch (codec) {
      case 'null':
        return data;
      case 'deflate':
        return new Uint8Array(inflateRawSync(data));
      case 'snappy': {
        if (data.length < 4) throw new Error('block shorter than its CRC');
        // Our decoder (parquet/snappy.ts): it checks the preamble against what the block can decode
        // to before allocating (snappyjs, used before, allocated whatever a flipped bit claimed).
        const out = snappyUncompressRaw(data.subarray(0, data.length - 4));
        const want = new DataView(data.buffer, data.byteOffset + data.length - 4, 4).getUint32(0, false);
        if (crc32(out) >>> 0 !== want) throw corruption(path, 'snappy block CRC32 mismatch');
        return out;
      }
      case 'zstandard':
        return zstdDecompressBounded(data, Infinity);
      default:
        throw notSupported(`Avro codec '${codec}' in ${path} is not supported`);
    }
  } catch (e) {
    if (e instanceof Error && e.name.startsWith('LsmError')) throw e;
    throw corruption(path, `cannot decompress ${codec} block: ${(e as Error).message}`, e);
  }
}

/** Named types (records, enums, fixed) of a schema, by full and by short name. */
function collectNamed(s: unknown, named: Map<string, unknown>, ns: string | undefined): void {
  if (Array.isArray(s)) {
    for (const b of s) collectNamed(b, named, ns);
    return;
  }
  if (s === null || typeof s !== 'object') return;
  const o = s as { type?: unknown; name?: string; namespace?: string; fields?: Array<{ type: unknown }>; items?: unknown; values?: unknown };
  let inner = ns;
  if ((o.type === 'record' || o.type === 'error' || o.type === 'enum' || o.type === 'fixed') && typeof o.name === 'string') {
    const full = o.name.includes('.') ? o.name : o.namespace ?? ns ? `${o.namespace ?? ns}.${o.name}` : o.name;
    named.set(full, s);
    named.set(full.slice(full.lastIndexOf('.') + 1), s);
    inner = full.includes('.') ? full.slice(0, full.lastIndexOf('.')) : undefined;
  }
  for (const f of o.fields ?? []) collectNamed(f.type, named, inner);
  if (o.items !== undefined) collectNamed(o.items, named, inner);
  if (o.values !== undefined) collectNamed(o.values, named, inner);
  if (typeof o.type === 'object') collectNamed(o.type, named, inner);
}

/**
 * Walks one value of `s` at `r.pos` without building it, throwing Corruption where the bytes
 * cannot hold it: a length or varint past the end, a union branch or enum symbol out of range, or
 * an array or map block claiming more items than bytes remain (Reader.blocks). avsc's decoder does
 * not check the last: it grows an array to whatever count a damaged block claims (a flipped bit in
 * a manifest made it 175 M items and V8 aborted the process). Every item of the schemas read here
 * takes at least one byte (no array of nulls or of empty records).
 */
function checkValue(s: unknown, r: Reader, named: Map<string, unknown>): void {
  if (typeof s === 'string') {
    switch (s) {
      case 'null':
        return;
      case 'boolean':
        r.bytes(1);
        return;
      case 'int':
      case 'long':
        r.long();
        return;
      case 'float':
        r.bytes(4);
        return;
      case 'double':
        r.bytes(8);
        return;
      case 'bytes':
      case 'string':
        r.bytes(r.long());
        return;
      default: {
        const t = named.get(s);
        if (t === undefined) throw corruption(r.path, `the Avro writer schema names an unknown type '${s}'`);
        checkValue(t, r, named);
        return;
      }
    }
  }
  if (Array.isArray(s)) {
    const i = r.long();
    if (i < 0 || i >= s.length) throw corruption(r.path, `Avro union branch ${i} out of ${s.length}`);
    checkValue(s[i], r, named);
    return;
  }
  const o = s as { type: unknown; fields?: Array<{ type: unknown }>; items?: unknown; values?: unknown; size?: number; symbols?: unknown[] };
  switch (o.type) {
    case 'record':
    case 'error':
      for (const f of o.fields ?? []) checkValue(f.type, r, named);
      return;
    case 'array':
      r.blocks('array', () => checkValue(o.items, r, named));
      return;
    case 'map':
      r.blocks('map', () => {
        r.bytes(r.long());
        checkValue(o.values, r, named);
      });
      return;
    case 'enum': {
      const i = r.long();
      if (i < 0 || i >= (o.symbols?.length ?? 0)) throw corruption(r.path, `Avro enum symbol ${i} out of range`);
      return;
    }
    case 'fixed':
      r.bytes(o.size ?? 0);
      return;
    default:
      checkValue(o.type, r, named); // a primitive with attributes, e.g. {"type": "long", "logicalType": …}
  }
}

/** Reads a whole container file; corruption on any framing or record error. */
export function readAvroContainer(bytes: Uint8Array, path: string): AvroContainer {
  if (bytes.length < 4 || MAGIC.some((m, i) => bytes[i] !== m)) throw corruption(path, 'not an Avro container file (bad magic)');
  const r = new Reader(bytes, path);
  r.pos = 4;
  const meta = new Map<string, Uint8Array>();
  const text = new TextDecoder();
  r.blocks('header metadata', () => {
    const k = text.decode(r.bytes(r.long()));
    meta.set(k, r.bytes(r.long()));
  });
  const sync = r.bytes(16);
  const schemaBytes = meta.get('avro.schema');
  if (!schemaBytes) throw corruption(path, 'Avro header has no avro.schema');
  const codec = meta.has('avro.codec') ? text.decode(meta.get('avro.codec')) : 'null';
  let schema: object;
  let type: Avsc.Type;
  try {
    schema = JSON.parse(text.decode(schemaBytes)) as object;
    type = avroType(schema);
  } catch (e) {
    throw corruption(path, `bad Avro writer schema: ${(e as Error).message}`, e);
  }
  const named = new Map<string, unknown>();
  collectNamed(schema, named, undefined);
  const records: unknown[] = [];
  while (r.pos < bytes.length) {
    const n = r.long();
    const size = r.long();
    if (n < 0 || size < 0) throw corruption(path, `negative Avro block count ${n} or size ${size}`);
    const raw = decompressBlock(codec, r.bytes(size), path);
    const marker = r.bytes(16);
    for (let i = 0; i < 16; i++) if (marker[i] !== sync[i]) throw corruption(path, `sync marker mismatch after block at ${r.pos - 16 - size}`);
    const buf = Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength);
    // The block's records walked first, bounds-checked (checkValue), so a damaged count is
    // Corruption here and never reaches avsc.
    const check = new Reader(raw, path);
    for (let i = 0; i < n && check.pos < raw.length; i++) checkValue(schema, check, named);
    let pos = 0;
    for (let i = 0; i < n; i++) {
      let res: { value: unknown; offset: number };
      try {
        res = type.decode(buf, pos);
      } catch (e) {
        throw corruption(path, `undecodable Avro record: ${(e as Error).message}`, e);
      }
      if (res.offset < 0) throw corruption(path, `Avro block holds fewer than its ${n} records`);
      records.push(res.value);
      pos = res.offset;
    }
    if (pos !== buf.length) throw corruption(path, `Avro block has ${buf.length - pos} bytes after its ${n} records`);
  }
  return { schema, codec, records };
}

function compressBlock(codec: AvroWriteCodec, data: Uint8Array): Uint8Array {
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
      throw invalidArgument(`Avro write codec must be null, deflate or snappy, got '${codec as string}'`);
  }
}

/** Writes records (plain objects, bytes fields as Buffer, unions unwrapped) as one container file. */
export function writeAvroContainer(schema: object, records: readonly unknown[], codec: AvroWriteCodec): Uint8Array {
  const type = avroType(schema);
  const head: number[] = [...MAGIC];
  const meta: Array<[string, Uint8Array]> = [
    ['avro.schema', Buffer.from(JSON.stringify(schema))],
    ['avro.codec', Buffer.from(codec)],
  ];
  writeLong(head, meta.length);
  for (const [k, v] of meta) {
    writeLong(head, k.length);
    for (let i = 0; i < k.length; i++) head.push(k.charCodeAt(i));
    writeLong(head, v.length);
    for (const byte of v) head.push(byte);
  }
  writeLong(head, 0);
  const sync = randomBytes(16);
  const parts: Uint8Array[] = [Uint8Array.from(head), sync];
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  const flush = () => {
    if (pending.length === 0) return;
    const block = compressBlock(codec, Buffer.concat(pending, pendingBytes));
    const h: number[] = [];
    writeLong(h, pending.length);
    writeLong(h, block.length);
    parts.push(Uint8Array.from(h), block, sync);
    pending = [];
    pendingBytes = 0;
  };
  for (const rec of records) {
    let b: Buffer;
    try {
      b = type.toBuffer(rec);
    } catch (e) {
      throw invalidArgument(`record does not match its Avro schema: ${(e as Error).message}`);
    }
    pending.push(b);
    pendingBytes += b.length;
    if (pendingBytes >= BLOCK_TARGET_BYTES) flush();
  }
  flush();
  return new Uint8Array(Buffer.concat(parts));
}
