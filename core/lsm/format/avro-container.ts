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
import type * as Avsc from 'avsc';
import { corruption, invalidArgument } from '../errors.ts';
import { avroBlockFrame, avroHeader, compressAvroBlock, In, readAvroBlock, readAvroHeader, type AvroWriteCodec } from './avro-block.ts';

// avsc is CommonJS without ESM named exports.
const require = createRequire(import.meta.url);
const avro = require('avsc') as typeof Avsc;

export type { AvroWriteCodec };
export interface AvroContainer {
  /** The writer schema from the header, parsed. */
  schema: object;
  codec: string;
  records: unknown[];
}

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
 * an array or map block claiming more items than bytes remain (In.blocks, avro-block.ts). avsc's decoder does
 * not check the last: it grows an array to whatever count a damaged block claims (a flipped bit in
 * a manifest made it 175 M items and V8 aborted the process). Every item of the schemas read here
 * takes at least one byte (no array of nulls or of empty records).
 */
function checkValue(s: unknown, r: In, named: Map<string, unknown>): void {
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
      r.blocks('Avro array', () => checkValue(o.items, r, named));
      return;
    case 'map':
      r.blocks('Avro map', () => {
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

/** avsc type and named types per writer schema object (readAvroHeader's, shared per schema text). */
const readers = new WeakMap<object, { type: Avsc.Type; named: Map<string, unknown> }>();

/** Reads a whole container file; corruption on any framing or record error. `schema` is shared: do not modify. */
export function readAvroContainer(bytes: Uint8Array, path: string): AvroContainer {
  const b = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const header = readAvroHeader(b, path);
  const { codec, sync } = header;
  const schema = header.schema as object;
  // readAvroHeader hands out one object per schema text, so its type and named types are made once.
  let reader = typeof schema === 'object' && schema !== null ? readers.get(schema) : undefined;
  if (reader === undefined) {
    let type: Avsc.Type;
    try {
      type = avroType(schema);
    } catch (e) {
      throw corruption(path, `bad Avro writer schema: ${(e as Error).message}`, e);
    }
    const named = new Map<string, unknown>();
    collectNamed(schema, named, undefined);
    reader = { type, named };
    if (typeof schema === 'object' && schema !== null) readers.set(schema, reader); // a primitive schema ("long") is no WeakMap key
  }
  const { type, named } = reader;
  const r = new In(b, b.length, path);
  r.pos = header.dataStart;
  const records: unknown[] = [];
  while (r.pos < b.length) {
    const { count: n, data: buf } = readAvroBlock(r, codec, sync);
    // The block's records walked first, bounds-checked (checkValue), so a damaged count is
    // Corruption here and never reaches avsc.
    const check = new In(buf, buf.length, path);
    for (let i = 0; i < n && check.pos < buf.length; i++) checkValue(schema, check, named);
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

/** Writes records (plain objects, bytes fields as Buffer, unions unwrapped) as one container file. */
export function writeAvroContainer(schema: object, records: readonly unknown[], codec: AvroWriteCodec): Uint8Array {
  const type = avroType(schema);
  const sync = randomBytes(16);
  const parts: Uint8Array[] = [avroHeader(schema, codec, sync)];
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  const flush = () => {
    if (pending.length === 0) return;
    const block = compressAvroBlock(codec, Buffer.concat(pending, pendingBytes));
    parts.push(avroBlockFrame(pending.length, block.length), block, sync);
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
