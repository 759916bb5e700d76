// Thrift compact protocol, the encoding of Parquet's footer (FileMetaData) and page headers.
//
// Writer: `ThriftWriter` emits structs field by field; the caller writes fields in ascending id
// order (the delta encoding of field ids assumes it) and closes every struct it opens.
// Reader: `readStruct` decodes any struct generically into `TStruct` (field id → value), skipping
// nothing and trusting nothing: every length is checked against the bytes left, nesting depth is
// bounded, and any malformed input throws `ThriftError` (the caller turns it into a Corruption
// naming the file). i64 values decode to a number when safe, else to a bigint.

import { ByteWriter } from './byte-writer.ts';

export const T_STOP = 0;
export const T_TRUE = 1;
export const T_FALSE = 2;
export const T_BYTE = 3;
export const T_I16 = 4;
export const T_I32 = 5;
export const T_I64 = 6;
export const T_DOUBLE = 7;
export const T_BINARY = 8;
export const T_LIST = 9;
export const T_SET = 10;
export const T_MAP = 11;
export const T_STRUCT = 12;

export type TValue = boolean | number | bigint | Uint8Array | TValue[] | TStruct | Map<TValue, TValue>;
export interface TStruct {
  [field: number]: TValue | undefined;
}

export class ThriftError extends Error {}

const ENC = new TextEncoder();

export class ThriftWriter {
  readonly out: ByteWriter;
  private last = 0;
  private readonly stack: number[] = [];

  constructor(out: ByteWriter = new ByteWriter(256)) {
    this.out = out;
  }

  private header(id: number, type: number): void {
    const delta = id - this.last;
    if (delta > 0 && delta <= 15) this.out.u8((delta << 4) | type);
    else {
      this.out.u8(type);
      this.zigzag(id);
    }
    this.last = id;
  }

  private zigzag(v: number | bigint): void {
    if (typeof v === 'bigint' || !Number.isSafeInteger(v) || Math.abs(v) > 0x3fffffff) {
      let z = BigInt.asUintN(64, (BigInt(v) << 1n) ^ (BigInt(v) >> 63n));
      this.out.ensure(10);
      while (z >= 0x80n) {
        this.out.u8(Number(z & 0x7fn) | 0x80);
        z >>= 7n;
      }
      this.out.u8(Number(z));
      return;
    }
    this.out.uvarint(((v << 1) ^ (v >> 31)) >>> 0);
  }

  i32(id: number, v: number): void {
    this.header(id, T_I32);
    this.zigzag(v);
  }
  i16(id: number, v: number): void {
    this.header(id, T_I16);
    this.zigzag(v);
  }
  byte(id: number, v: number): void {
    this.header(id, T_BYTE);
    this.out.u8(v & 0xff);
  }
  i64(id: number, v: number | bigint): void {
    this.header(id, T_I64);
    this.zigzag(v);
  }
  bool(id: number, v: boolean): void {
    this.header(id, v ? T_TRUE : T_FALSE);
  }
  binary(id: number, v: Uint8Array): void {
    this.header(id, T_BINARY);
    this.out.uvarint(v.length);
    this.out.bytes(v);
  }
  string(id: number, v: string): void {
    this.binary(id, ENC.encode(v));
  }
  /** Opens a struct-valued field; close it with `structEnd`. */
  structBegin(id: number): void {
    this.header(id, T_STRUCT);
    this.stack.push(this.last);
    this.last = 0;
  }
  /** Writes the stop byte of the innermost open struct (or of the top-level struct). */
  structEnd(): void {
    this.out.u8(T_STOP);
    this.last = this.stack.pop() ?? 0;
  }
  /** Opens a list-valued field; then write `size` elements with the `elem*` methods. */
  listBegin(id: number, elemType: number, size: number): void {
    this.header(id, T_LIST);
    if (size < 15) this.out.u8((size << 4) | elemType);
    else {
      this.out.u8(0xf0 | elemType);
      this.out.uvarint(size);
    }
  }
  elemI32(v: number): void {
    this.zigzag(v);
  }
  elemString(v: string): void {
    const b = ENC.encode(v);
    this.out.uvarint(b.length);
    this.out.bytes(b);
  }
  /** Starts a struct element of a list; close it with `structEnd`. */
  elemStructBegin(): void {
    this.stack.push(this.last);
    this.last = 0;
  }
}

const MAX_DEPTH = 32;

/** Decodes one compact-protocol struct at `pos`; returns it and the offset just past it. */
export function readStruct(buf: Uint8Array, pos: number, end = buf.length): { value: TStruct; end: number } {
  const r = new Reader(buf, pos, end);
  const value = r.struct(0);
  return { value, end: r.pos };
}

class Reader {
  constructor(
    readonly buf: Uint8Array,
    public pos: number,
    readonly end: number,
  ) {}

  fail(msg: string): never {
    throw new ThriftError(`thrift: ${msg} at byte ${this.pos}`);
  }

  byte(): number {
    if (this.pos >= this.end) this.fail('unexpected end of data');
    return this.buf[this.pos++]!;
  }

  /** Unsigned varint as a number (exact below 2^53) or bigint beyond. */
  uvarint(): number | bigint {
    let result = 0;
    let mul = 1;
    for (let i = 0; i < 10; i++) {
      const b = this.byte();
      result += (b & 0x7f) * mul;
      if (b < 0x80) {
        if (result <= Number.MAX_SAFE_INTEGER) return result;
        return this.bigFrom(i);
      }
      mul *= 128;
    }
    return this.fail('varint too long');
  }

  private bigFrom(lastIndex: number): bigint {
    let v = 0n;
    const start = this.pos - lastIndex - 1;
    for (let i = lastIndex; i >= 0; i--) v = (v << 7n) | BigInt(this.buf[start + i]! & 0x7f);
    return BigInt.asUintN(64, v);
  }

  zigzag(): number | bigint {
    const u = this.uvarint();
    if (typeof u === 'number') return u % 2 === 0 ? u / 2 : -(u + 1) / 2;
    const s = (u >> 1n) ^ -(u & 1n);
    return s >= BigInt(Number.MIN_SAFE_INTEGER) && s <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(s) : s;
  }

  size(): number {
    const n = this.uvarint();
    if (typeof n !== 'number' || n > this.end - this.pos) this.fail(`length ${n} beyond the data`);
    return n;
  }

  value(type: number, depth: number): TValue {
    switch (type) {
      case T_TRUE:
        return true;
      case T_FALSE:
        return false;
      case T_BYTE: {
        const b = this.byte();
        return b > 127 ? b - 256 : b;
      }
      case T_I16:
      case T_I32:
      case T_I64:
        return this.zigzag();
      case T_DOUBLE: {
        if (this.end - this.pos < 8) this.fail('truncated double');
        const v = new DataView(this.buf.buffer, this.buf.byteOffset + this.pos, 8).getFloat64(0, true);
        this.pos += 8;
        return v;
      }
      case T_BINARY: {
        const n = this.size();
        const v = this.buf.subarray(this.pos, this.pos + n);
        this.pos += n;
        return v;
      }
      case T_LIST:
      case T_SET: {
        if (depth >= MAX_DEPTH) this.fail('nesting too deep');
        const h = this.byte();
        const elem = h & 0x0f;
        const n = h >> 4 === 15 ? this.size() : h >> 4;
        const out: TValue[] = [];
        for (let i = 0; i < n; i++) {
          // Inside collections a boolean is one byte: 1 true, anything else false.
          if (elem === T_TRUE || elem === T_FALSE) out.push(this.byte() === 1);
          else out.push(this.value(elem, depth + 1));
        }
        return out;
      }
      case T_MAP: {
        if (depth >= MAX_DEPTH) this.fail('nesting too deep');
        const n = this.size();
        const m = new Map<TValue, TValue>();
        if (n === 0) return m;
        const kv = this.byte();
        for (let i = 0; i < n; i++) m.set(this.value(kv >> 4, depth + 1), this.value(kv & 15, depth + 1));
        return m;
      }
      case T_STRUCT:
        if (depth >= MAX_DEPTH) this.fail('nesting too deep');
        return this.struct(depth + 1);
      default:
        return this.fail(`unknown field type ${type}`);
    }
  }

  struct(depth: number): TStruct {
    const out: TStruct = {};
    let last = 0;
    for (;;) {
      const h = this.byte();
      const type = h & 0x0f;
      if (type === T_STOP) {
        if (h !== 0) this.fail('bad stop byte');
        return out;
      }
      const delta = h >> 4;
      let id: number;
      if (delta !== 0) id = last + delta;
      else {
        const z = this.zigzag();
        if (typeof z !== 'number') this.fail('bad field id');
        id = z;
      }
      if (id < -32768 || id > 32767) this.fail(`bad field id ${id}`);
      out[id] = this.value(type, depth);
      last = id;
    }
  }
}
