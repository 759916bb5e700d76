// A growing little-endian byte buffer: the one output sink of every encoder in this codec.
//
// Invariants:
//   - `buf[0, length)` holds the bytes written so far; bytes past `length` are scratch.
//   - `ensure(n)` must be called before any unchecked write of up to `n` bytes (`u8At`, direct
//     `buf[...]` stores); the checked helpers (`u8`, `i32`, `bytes`, …) ensure for themselves.
//   - `buf` and `view` are replaced when the buffer grows: never hold them across an `ensure`.

export class ByteWriter {
  buf: Uint8Array;
  view: DataView;
  length = 0;

  constructor(initialCapacity = 1024) {
    this.buf = new Uint8Array(Math.max(16, initialCapacity));
    this.view = new DataView(this.buf.buffer);
  }

  /** Makes room for `n` more bytes. */
  ensure(n: number): void {
    const need = this.length + n;
    if (need <= this.buf.length) return;
    let cap = this.buf.length * 2;
    while (cap < need) cap *= 2;
    const next = new Uint8Array(cap);
    next.set(this.buf.subarray(0, this.length));
    this.buf = next;
    this.view = new DataView(next.buffer);
  }

  reset(): void {
    this.length = 0;
  }

  u8(v: number): void {
    this.ensure(1);
    this.buf[this.length++] = v;
  }

  i32(v: number): void {
    this.ensure(4);
    this.view.setInt32(this.length, v, true);
    this.length += 4;
  }

  /** Unsigned LEB128 varint of a non-negative integer below 2^53. */
  uvarint(v: number): void {
    this.ensure(10);
    const b = this.buf;
    let p = this.length;
    while (v >= 0x80) {
      b[p++] = (v % 0x80) | 0x80;
      v = Math.floor(v / 0x80);
    }
    b[p++] = v;
    this.length = p;
  }

  bytes(src: Uint8Array): void {
    this.ensure(src.length);
    this.buf.set(src, this.length);
    this.length += src.length;
  }

  /**
   * Appends the UTF-8 bytes of `s` (lone surrogates become U+FFFD, as TextEncoder does) and
   * returns how many bytes were written. ASCII is copied by a plain loop: cheaper than a native
   * call for the short strings tables hold.
   */
  utf8(s: string): number {
    const n = s.length;
    this.ensure(n * 3);
    const b = this.buf;
    const start = this.length;
    let p = start;
    if (n > 48) {
      const r = UTF8.encodeInto(s, b.subarray(p));
      this.length = p + r.written;
      return r.written;
    }
    for (let i = 0; i < n; i++) {
      let c = s.charCodeAt(i);
      if (c < 0x80) {
        b[p++] = c;
      } else if (c < 0x800) {
        b[p++] = 0xc0 | (c >> 6);
        b[p++] = 0x80 | (c & 63);
      } else {
        if (c >= 0xd800 && c <= 0xdfff) {
          const d = i + 1 < n ? s.charCodeAt(i + 1) : 0;
          if (c <= 0xdbff && d >= 0xdc00 && d <= 0xdfff) {
            const cp = 0x10000 + ((c - 0xd800) << 10) + (d - 0xdc00);
            i++;
            b[p++] = 0xf0 | (cp >> 18);
            b[p++] = 0x80 | ((cp >> 12) & 63);
            b[p++] = 0x80 | ((cp >> 6) & 63);
            b[p++] = 0x80 | (cp & 63);
            continue;
          }
          c = 0xfffd;
        }
        b[p++] = 0xe0 | (c >> 12);
        b[p++] = 0x80 | ((c >> 6) & 63);
        b[p++] = 0x80 | (c & 63);
      }
    }
    this.length = p;
    return p - start;
  }

  /** A view of the bytes written so far (shares memory until the next write). */
  view0(): Uint8Array {
    return this.buf.subarray(0, this.length);
  }

  /** A copy of the bytes written so far. */
  toBytes(): Uint8Array {
    return this.buf.slice(0, this.length);
  }
}

const UTF8 = new TextEncoder();
