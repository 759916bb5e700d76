// Page compression codecs. Parquet compresses each page body on its own: SNAPPY is the raw block
// format (no framing; our own snappy.ts, several times faster than snappyjs), GZIP a gzip member
// (node:zlib), ZSTD one or more zstd frames (fzstd, decompression only).
//
// Invariants: `decompress` returns exactly `uncompressedSize` bytes or throws `CodecError` (the
// reader maps that to Corruption); codecs this store cannot run throw NotSupported. Writing ZSTD
// is not supported: Node 20's zlib has no zstd and no zstd compressor is installed (fzstd only
// decompresses).

import { kMaxLength } from 'node:buffer';
import { gunzipSync, gzipSync, inflateSync } from 'node:zlib';
import { decompress as zstdDecompress } from 'fzstd';
import { notSupported } from '../../errors.ts';
import { Codec, CODEC_NAMES } from './schema.ts';
import { snappyCompress, snappyUncompress } from './snappy.ts';

export class CodecError extends Error {}

export type CompressionName = 'uncompressed' | 'snappy' | 'gzip' | 'zstd';

export function codecOf(name: CompressionName): Codec {
  switch (name) {
    case 'uncompressed':
      return Codec.UNCOMPRESSED;
    case 'snappy':
      return Codec.SNAPPY;
    case 'gzip':
      return Codec.GZIP;
    case 'zstd':
      throw notSupported(
        'Parquet: writing ZSTD is not supported (Node 20 has no zstd compressor and none is installed); ' +
          "use 'snappy', 'gzip' or 'uncompressed' (reading ZSTD works)",
      );
    default:
      throw notSupported(`Parquet: unknown compression '${String(name)}'`);
  }
}

/** Compresses one page body. The result may share memory with nothing the caller reuses. */
export function compress(codec: Codec, data: Uint8Array): Uint8Array {
  switch (codec) {
    case Codec.UNCOMPRESSED:
      return data.slice();
    case Codec.SNAPPY:
      return snappyCompress(data);
    case Codec.GZIP:
      return gzipSync(data, { level: 6 });
    default:
      throw notSupported(`Parquet: cannot write codec ${CODEC_NAMES[codec] ?? codec}`);
  }
}

export function decompress(codec: number, data: Uint8Array, uncompressedSize: number): Uint8Array {
  let out: Uint8Array;
  try {
    switch (codec) {
      case Codec.UNCOMPRESSED:
        out = data;
        break;
      case Codec.SNAPPY:
        out = snappyUncompress(data, uncompressedSize);
        break;
      case Codec.GZIP: {
        // Inflating stops at the header's size: a damaged stream cannot grow the output past it.
        const opts = { maxOutputLength: Math.min(Math.max(1, uncompressedSize), kMaxLength) };
        out = data.length >= 2 && data[0] === 0x1f && data[1] === 0x8b ? gunzipSync(data, opts) : inflateSync(data, opts);
        break;
      }
      case Codec.ZSTD:
        out = zstdDecompressBounded(data, uncompressedSize);
        break;
      default:
        throw notSupported(`Parquet: compression codec ${CODEC_NAMES[codec] ?? codec} is not supported`);
    }
  } catch (e) {
    if (e instanceof Error && e.name.startsWith('LsmError')) throw e;
    throw new CodecError(`${CODEC_NAMES[codec]} decompression failed: ${(e as Error).message}`);
  }
  if (out.length !== uncompressedSize) {
    throw new CodecError(`${CODEC_NAMES[codec]} page decompressed to ${out.length} bytes, header says ${uncompressedSize}`);
  }
  return out;
}

/** The zstd frame magic, and the 16 magics of skippable frames (0x184D2A50 … 0x184D2A5F). */
const ZSTD_MAGIC = 0xfd2fb528;
/** The largest window the reference decoder accepts unless told otherwise (ZSTD_WINDOWLOG_LIMIT_DEFAULT 27). */
const ZSTD_MAX_WINDOW = 1 << 27;
/** Block_Maximum_Size: no block decodes to more than 128 KiB. */
const ZSTD_MAX_BLOCK = 128 * 1024;

/**
 * Decompresses zstd frames (fzstd) after walking their frame and block headers, which fzstd
 * trusts: it allocates a frame's declared content size, or else its window size (up to 2 GiB),
 * before decoding anything, and does not bound RLE blocks to the 128 KiB a block may hold. Throws
 * (before any of that) when a frame declares more content than its blocks can produce or than
 * `limit` (the size the caller expects, or Infinity), a window beyond the reference decoder's
 * default limit, a block beyond 128 KiB, or runs past the data.
 */
export function zstdDecompressBounded(data: Uint8Array, limit: number): Uint8Array {
  const u32 = (at: number): number => (data[at]! | (data[at + 1]! << 8) | (data[at + 2]! << 16) | (data[at + 3]! << 24)) >>> 0;
  let pos = 0;
  let declared = 0;
  while (pos < data.length) {
    if (pos + 4 > data.length) throw new CodecError('zstd: truncated frame magic');
    const magic = u32(pos);
    if (magic >>> 4 === 0x184d2a5) {
      if (pos + 8 > data.length) throw new CodecError('zstd: truncated skippable frame');
      pos += 8 + u32(pos + 4);
      continue;
    }
    if (magic !== ZSTD_MAGIC) throw new CodecError('zstd: bad frame magic');
    if (pos + 6 > data.length) throw new CodecError('zstd: truncated frame header');
    const flg = data[pos + 4]!;
    const single = (flg >> 5) & 1;
    const fcf = flg >> 6;
    const dictBytes = [0, 1, 2, 4][flg & 3]!;
    const sizeBytes = fcf ? 1 << fcf : single;
    let at = pos + 6 - single + dictBytes;
    if (at + sizeBytes > data.length) throw new CodecError('zstd: truncated frame header');
    let content: number | undefined;
    if (sizeBytes > 0) {
      content = 0;
      for (let k = sizeBytes - 1; k >= 0; k--) content = content * 256 + data[at + k]!;
      if (fcf === 1) content += 256;
    }
    at += sizeBytes;
    let window: number;
    if (single) window = content!;
    else {
      const wd = data[pos + 5]!;
      const base = 2 ** (10 + (wd >> 3));
      window = base + (base / 8) * (wd & 7);
    }
    // The blocks: what they can produce at most (a compressed block up to the block maximum).
    let most = 0;
    for (;;) {
      if (at + 3 > data.length) throw new CodecError('zstd: truncated block header');
      const b = data[at]! | (data[at + 1]! << 8) | (data[at + 2]! << 16);
      const type = (b >> 1) & 3;
      const size = b >>> 3;
      at += 3;
      if (type === 3) throw new CodecError('zstd: reserved block type');
      if (size > ZSTD_MAX_BLOCK) throw new CodecError(`zstd: block of ${size} bytes (at most ${ZSTD_MAX_BLOCK})`);
      most += type === 2 ? Math.min(window, ZSTD_MAX_BLOCK) : size;
      at += type === 1 ? 1 : size;
      if (at > data.length) throw new CodecError('zstd: block beyond the data');
      if (b & 1) break;
    }
    if ((flg >> 2) & 1) at += 4;
    // fzstd allocates the content size when declared (and not 0), else the window.
    if (content !== undefined && content > 0) {
      if (content > most) throw new CodecError(`zstd: frame declares ${content} bytes, its blocks hold at most ${most}`);
      declared += content;
      if (declared > limit) throw new CodecError(`zstd: frames declare ${declared} bytes, more than the ${limit} expected`);
    } else if (window > ZSTD_MAX_WINDOW) throw new CodecError(`zstd: window of ${window} bytes (at most ${ZSTD_MAX_WINDOW})`);
    pos = at;
  }
  return zstdDecompress(data);
}
