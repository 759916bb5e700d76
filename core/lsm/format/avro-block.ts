// Avro object container framing (Avro 1.11 spec, "Object Container Files"), shared by the
// manifest reader and writer (avro-container.ts, records through avsc) and the data-file reader and
// writer (avro-data.ts, column-major by hand):
//
//   'Obj' 0x01 | metadata map<bytes> (avro.schema, avro.codec) | 16-byte sync marker |
//   blocks of { long recordCount, long byteSize, byteSize bytes of (compressed) records, sync }.
//
// Codecs: null, deflate (raw RFC 1951), snappy (raw snappy + big-endian CRC32 of the uncompressed
// block), zstandard (read only). Invariants: every read is bounds-checked and a read past the end,
// a bad header, a sync mismatch or a block that does not decompress is a Corruption of `path`;
// every size is checked against the bytes there before anything is allocated for it.

import { crc32, deflateRawSync, inflateRawSync } from 'node:zlib';
import { corruption, invalidArgument, LsmError, notSupported } from '../errors.ts';
import { zstdDecompressBounded } from './parquet/compression.ts';
import { snappyCompress, snappyUncompressRaw } from './parquet/snappy.ts';

export const AVRO_MAGIC = [0x4f, 0x62, 0x6a, 0x01];
export type AvroWriteCodec = 'null' | 'deflate' | 'snappy';

/** A growing output buffer with Avro's primitive encodings. */
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
    // From 2^52 on, a negative number's zigzag form (2|n| − 1, odd) is beyond what a double holds.
    if (n <= -4503599627370496 || n >= 4503599627370496) return this.bigLong(BigInt(n));
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

/** A bounds-checked reader over b[pos, end): a read past `end` is a Corruption of `path`. */
export class In {
  pos = 0;
  constructor(
    readonly b: Buffer,
    readonly end: number,
    readonly path: string,
    /** Opens every message of a Corruption (which reader found it). */
    readonly label = 'Avro',
  ) {}
  fail(what: string): never {
    throw corruption(this.path, `${this.label}: ${what}`);
  }
  /** Zigzag varint as a number; one beyond 2^53 (which a number cannot hold exactly) is a Corruption. */
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
        // Past 2^53 the sum is rounded: read again exactly (a number from −2^53 to −2^52 has a
        // zigzag form there); one beyond ±2^53, which needs bigLong(), is damage here.
        if (n > Number.MAX_SAFE_INTEGER) return this.exactSafeLong();
        this.pos = p;
        return n % 2 === 0 ? n / 2 : -(n + 1) / 2;
      }
      mul *= 128;
    }
    this.fail('varint longer than 10 bytes');
  }
  /** `long()` for a varint whose zigzag form passes 2^53, at `pos`. */
  private exactSafeLong(): number {
    const v = this.bigLong();
    if (v < -9007199254740991n || v > 9007199254740991n) this.fail('varint beyond 2^53');
    return Number(v);
  }
  /** Passes over one varint without decoding it: a field not read may hold any long. */
  skipLong(): void {
    for (let i = 0; i < 10; i++) {
      if (this.pos >= this.end) this.fail('varint runs past its block');
      if (this.b[this.pos++]! < 0x80) return;
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
  /** The next `n` bytes, as a view. */
  bytes(n: number): Buffer {
    return this.b.subarray(this.take(n), this.pos);
  }
  /**
   * Avro blocks of `what` (count, byte size when the count is negative, the items) until a zero
   * count; `each` reads one item. Every item of the schemas read here takes at least one byte (no
   * array of nulls or of empty records), so a block that claims more items than bytes remain is
   * damage, refused before the loop: a decoder would grow an array to that count.
   */
  blocks(what: string, each: () => void): void {
    for (;;) {
      let n = this.long();
      if (n === 0) return;
      if (n < 0) {
        n = -n;
        this.long();
      }
      if (n > this.end - this.pos) this.fail(`an ${what} block claims ${n} items in the ${this.end - this.pos} bytes left`);
      for (let k = 0; k < n; k++) each();
    }
  }
}

/** The header of a container file: magic, metadata, sync marker. */
export function avroHeader(schema: object, codec: string, sync: Uint8Array): Buffer {
  const o = new Out(1024);
  o.ensure(4);
  for (const m of AVRO_MAGIC) o.buf[o.pos++] = m;
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

/** One block's framing before its bytes: record count and byte size. */
export function avroBlockFrame(records: number, bytes: number): Buffer {
  const o = new Out(20);
  o.long(records);
  o.long(bytes);
  return o.buf.subarray(0, o.pos);
}

export interface AvroHeader {
  /** The writer schema, parsed (not checked beyond being JSON); shared by every file of the same schema text: do not modify. */
  schema: unknown;
  codec: string;
  sync: Buffer;
  /** Where the first block starts. */
  dataStart: number;
}

/** The codecs the Avro specification defines (those this reader decodes, and bzip2 and xz). */
const AVRO_CODECS: ReadonlySet<string> = new Set(['null', 'deflate', 'snappy', 'bzip2', 'xz', 'zstandard']);

/**
 * Reads a container file's header; a missing magic, schema, a schema that is not JSON or a codec
 * name the Avro specification does not define is corruption.
 */
export function readAvroHeader(b: Buffer, path: string, label = 'Avro'): AvroHeader {
  if (b.length < 4 || AVRO_MAGIC.some((m, i) => b[i] !== m)) throw corruption(path, 'not an Avro container file (bad magic)');
  const h = new In(b, b.length, path, label);
  h.pos = 4;
  const meta = new Map<string, Buffer>();
  h.blocks('Avro header metadata', () => {
    const key = h.bytes(h.long()).toString('utf8');
    meta.set(key, h.bytes(h.long()));
  });
  const sync = h.bytes(16);
  const schemaBytes = meta.get('avro.schema');
  if (!schemaBytes) throw corruption(path, 'Avro header has no avro.schema');
  const codec = meta.has('avro.codec') ? meta.get('avro.codec')!.toString('utf8') : 'null';
  // A name the Avro specification does not give is a damaged header (a flipped bit in 'deflate'),
  // not a codec another writer chose: Corruption, where a codec of the specification this reader
  // lacks (bzip2, xz) stays NotSupported, at its first block.
  if (!AVRO_CODECS.has(codec)) throw corruption(path, `Avro header names codec ${JSON.stringify(codec.slice(0, 40))}, which the Avro specification does not define (expected one of ${[...AVRO_CODECS].join(', ')})`);
  const text = schemaBytes.toString('utf8');
  let schema = parsedSchemas.get(text);
  if (schema === undefined) {
    try {
      schema = JSON.parse(text) as unknown;
    } catch (e) {
      throw corruption(path, `bad Avro writer schema: ${(e as Error).message}`, e);
    }
    if (parsedSchemas.size >= PARSED_SCHEMAS_MAX) parsedSchemas.clear();
    parsedSchemas.set(text, schema);
  }
  return { schema, codec, sync, dataStart: h.pos };
}

/** Distinct writer schema texts kept parsed (a table's manifests use two or three). */
const PARSED_SCHEMAS_MAX = 64;
/**
 * Writer schemas by their header text. A table's first expiration reads every tag's manifest lists
 * and manifests — thousands of files sharing a few schemas — and parsing each header's schema was
 * a quarter of a file's decode (core/lsm DESIGN.md, "Commit cost and tags"). Shared: never modified.
 */
const parsedSchemas = new Map<string, unknown>();

/** The next block's frame: its record count and byte size (a negative one is damage). */
export function readAvroBlockFrame(r: In): { count: number; size: number } {
  const count = r.long();
  const size = r.long();
  if (count < 0 || size < 0) throw corruption(r.path, `negative Avro block count ${count} or size ${size}`);
  return { count, size };
}

/** The next block: its frame, its records' bytes decompressed, and the sync marker after it checked. */
export function readAvroBlock(r: In, codec: string, sync: Buffer): { count: number; data: Buffer } {
  const { count, size } = readAvroBlockFrame(r);
  const data = decompressAvroBlock(codec, r.bytes(size), r.path);
  if (!r.bytes(16).equals(sync)) r.fail(`sync marker mismatch after the block at ${r.pos - 16 - size}`);
  return { count, data };
}

export function compressAvroBlock(codec: AvroWriteCodec, data: Uint8Array): Uint8Array {
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

function decompressAvroBlock(codec: string, data: Buffer, path: string): Buffer {
  try {
    switch (codec) {
      case 'null':
        return data;
      case 'deflate':
        return inflateRawSync(data);
      case 'snappy': {
        if (data.length < 4) throw new Error('block shorter than its CRC');
        // The uncompressed length is the snappy preamble, checked (parquet/snappy.ts) against what
        // the block can decode to before anything is allocated.
        const out = snappyUncompressRaw(data.subarray(0, data.length - 4));
        if (crc32(out) >>> 0 !== data.readUInt32BE(data.length - 4)) throw corruption(path, 'Avro snappy block CRC32 mismatch');
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
    throw corruption(path, `cannot decompress Avro ${codec} block: ${(e as Error).message}`, e);
  }
}
