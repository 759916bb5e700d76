// Page compression codecs. Parquet compresses each page body on its own: SNAPPY is the raw block
// format (no framing; our own snappy.ts, several times faster than snappyjs), GZIP a gzip member
// (node:zlib), ZSTD one or more zstd frames (fzstd, decompression only).
//
// Invariants: `decompress` returns exactly `uncompressedSize` bytes or throws `CodecError` (the
// reader maps that to Corruption); codecs this store cannot run throw NotSupported. Writing ZSTD
// is not supported: Node 20's zlib has no zstd and no zstd compressor is installed (fzstd only
// decompresses).

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
      case Codec.GZIP:
        out = data.length >= 2 && data[0] === 0x1f && data[1] === 0x8b ? gunzipSync(data) : inflateSync(data);
        break;
      case Codec.ZSTD:
        out = zstdDecompress(data);
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
