// Deletion vectors (paimon-format.md §8; Paimon's DeletionFileWriter, BitmapDeletionVector):
// reading tables written with `deletion-vectors.enabled=true`, and the codec to build such data.
//
// Bytes. A DV index file (`index/index-…`) is: byte 1 (version), then for each data file
//   int32 BE size | payload (size bytes) | int32 BE CRC32 of the payload.
// A 32-bit payload is int32 BE magic 1581511376 followed by a RoaringBitmap in the portable
// serialization (little-endian: cookie 12346 + container count, or cookie 12347 with run flags;
// key/cardinality pairs; offsets; array, bitmap and run containers). The index manifest
// (snapshot `indexManifest`) lists, per (partition, bucket), the DV file and for each data file
// the range (offset of the size int, payload size). A CRC or magic mismatch is a Corruption.
// 64-bit payloads (`deletion-vectors.bitmap64`, LE magic 1681511377) are refused as NotSupported.
//
// Read semantics (Paimon's batch scan of a DV table, CoreOptions.batchScanSkipLevel0): level-0
// files are NOT read (they become visible when compaction moves them up and records their
// superseded rows in DVs); every level ≥ 1 file is read as is, minus the row positions in its
// deletion vector, without a merge. `deletion-vectors.merge-on-read=true` is not supported.
// Writing DV tables: dv-writer.ts (TableWriter uses it when `deletion-vectors.enabled`).

import { crc32 } from 'node:zlib';
import { corruption, LsmError } from './errors.ts';
import { decodeIndexManifest, type IndexManifestEntry } from './manifest.ts';
import type { RunData } from './data-file.ts';
import type { Snapshot } from './snapshot.ts';
import type { Table } from './table.ts';

export const DV_MAGIC = 1581511376;
export const DV64_MAGIC = 1681511377;
const SERIAL_COOKIE_NO_RUNCONTAINER = 12346;
const SERIAL_COOKIE = 12347;
const NO_OFFSET_THRESHOLD = 4;

/** True when the table's options say it keeps deletion vectors. */
export function deletionVectorsEnabled(raw: Readonly<Record<string, string>>): boolean {
  return (raw['deletion-vectors.enabled'] ?? 'false').trim().toLowerCase() === 'true';
}

// ---------------------------------------------------------------------------------------------
// RoaringBitmap portable format (32-bit).

/** Encodes sorted, distinct uint32 positions (array containers ≤ 4096, bitmap containers above). */
export function encodeRoaring(positions: readonly number[]): Uint8Array {
  const groups: Array<{ key: number; lows: number[] }> = [];
  let last = -1;
  for (const p of positions) {
    if (!Number.isInteger(p) || p < 0 || p > 0xffffffff || p <= last) throw new Error('assertion failed: roaring positions must be sorted distinct uint32');
    last = p;
    const key = Math.floor(p / 65536);
    if (groups.length === 0 || groups[groups.length - 1]!.key !== key) groups.push({ key, lows: [] });
    groups[groups.length - 1]!.lows.push(p % 65536);
  }
  const n = groups.length;
  const sizes = groups.map((g) => (g.lows.length <= 4096 ? g.lows.length * 2 : 8192));
  const headerLen = 8 + 4 * n + 4 * n;
  const out = new Uint8Array(headerLen + sizes.reduce((a, b) => a + b, 0));
  const dv = new DataView(out.buffer);
  dv.setUint32(0, SERIAL_COOKIE_NO_RUNCONTAINER, true);
  dv.setUint32(4, n, true);
  let offset = headerLen;
  groups.forEach((g, i) => {
    dv.setUint16(8 + 4 * i, g.key, true);
    dv.setUint16(8 + 4 * i + 2, g.lows.length - 1, true);
    dv.setUint32(8 + 4 * n + 4 * i, offset, true);
    if (g.lows.length <= 4096) {
      for (let k = 0; k < g.lows.length; k++) dv.setUint16(offset + 2 * k, g.lows[k]!, true);
    } else {
      for (const low of g.lows) out[offset + (low >> 3)]! |= 1 << (low & 7);
    }
    offset += sizes[i]!;
  });
  return out;
}

/** Decodes a portable RoaringBitmap into a sorted list of positions. Corruption on bad bytes. */
/** The most positions one bitmap may hold here (a data file has fewer rows by far). */
const MAX_POSITIONS = 100_000_000;

export function decodeRoaring(b: Uint8Array, path: string): number[] {
  const dv = new DataView(b.buffer, b.byteOffset, b.byteLength);
  const fail = (why: string): never => {
    throw corruption(path, `deletion vector bitmap: ${why}`);
  };
  const u16 = (at: number) => (at + 2 <= b.length ? dv.getUint16(at, true) : fail('truncated'));
  const u32 = (at: number) => (at + 4 <= b.length ? dv.getUint32(at, true) : fail('truncated'));
  const cookie = u32(0);
  let n: number;
  let pos: number;
  let runFlags: Uint8Array | undefined;
  if ((cookie & 0xffff) === SERIAL_COOKIE) {
    n = (cookie >>> 16) + 1;
    const flagBytes = Math.ceil(n / 8);
    if (4 + flagBytes > b.length) fail('truncated run flags');
    runFlags = b.subarray(4, 4 + flagBytes);
    pos = 4 + flagBytes;
  } else if (cookie === SERIAL_COOKIE_NO_RUNCONTAINER) {
    n = u32(4);
    pos = 8;
  } else return fail(`unknown cookie ${cookie}`);
  if (n > 65536) fail(`${n} containers`);
  const keys: number[] = [];
  const cards: number[] = [];
  let total = 0;
  for (let i = 0; i < n; i++) {
    keys.push(u16(pos + 4 * i));
    cards.push(u16(pos + 4 * i + 2) + 1);
    total += cards[i]!;
  }
  // Positions go into one JS array, which V8 cannot grow past ~134 M elements (it aborts the
  // process instead of throwing): a header claiming more is refused before anything is decoded.
  if (total > MAX_POSITIONS) fail(`the containers claim ${total} positions (more than ${MAX_POSITIONS} are not read)`);
  pos += 4 * n;
  const hasOffsets = !runFlags || n >= NO_OFFSET_THRESHOLD;
  if (hasOffsets) pos += 4 * n; // offsets are redundant for a sequential read
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const base = keys[i]! * 65536;
    if (i > 0 && keys[i]! <= keys[i - 1]!) fail('container keys out of order');
    const isRun = runFlags ? (runFlags[i >> 3]! >> (i & 7)) & 1 : 0;
    if (isRun) {
      // Runs are sorted, apart and within the container, and cover exactly its cardinality: a
      // damaged run cannot make the loop below push more than the header said.
      const runs = u16(pos);
      pos += 2;
      if (pos + 4 * runs > b.length) fail('truncated run container');
      let covered = 0;
      let next = 0;
      for (let r = 0; r < runs; r++) {
        const start = u16(pos + 4 * r);
        const len = u16(pos + 4 * r + 2);
        if (start < next || start + len > 0xffff) fail(`run ${start}+${len} overlaps the previous run or leaves the container`);
        next = start + len + 1;
        covered += len + 1;
      }
      if (covered !== cards[i]) fail(`run container covers ${covered} positions, its header says ${cards[i]}`);
      for (let r = 0; r < runs; r++) {
        const start = u16(pos + 4 * r);
        const len = u16(pos + 4 * r + 2);
        for (let k = 0; k <= len; k++) out.push(base + start + k);
      }
      pos += 4 * runs;
    } else if (cards[i]! <= 4096) {
      for (let k = 0; k < cards[i]!; k++) out.push(base + u16(pos + 2 * k));
      pos += 2 * cards[i]!;
    } else {
      if (pos + 8192 > b.length) fail('truncated bitmap container');
      let c = 0;
      for (let byte = 0; byte < 8192; byte++) {
        const v = b[pos + byte]!;
        if (v === 0) continue;
        for (let bit = 0; bit < 8; bit++) if (v & (1 << bit)) {
          out.push(base + byte * 8 + bit);
          c++;
        }
      }
      if (c !== cards[i]) fail(`bitmap container holds ${c} positions, its header says ${cards[i]}`);
      pos += 8192;
    }
  }
  if (pos !== b.length) fail(`${b.length - pos} bytes after the last container`);
  return out;
}

// ---------------------------------------------------------------------------------------------
// DV index files.

/** Encodes one DV index file; returns its bytes and each data file's range. */
export function encodeDeletionVectorFile(vectors: ReadonlyMap<string, readonly number[]>): { bytes: Uint8Array; ranges: Array<{ dataFileName: string; offset: number; length: number; cardinality: number }> } {
  const parts: Uint8Array[] = [Uint8Array.of(1)];
  let offset = 1;
  const ranges: Array<{ dataFileName: string; offset: number; length: number; cardinality: number }> = [];
  for (const [file, positions] of vectors) {
    const bitmap = encodeRoaring(positions);
    const payload = new Uint8Array(4 + bitmap.length);
    new DataView(payload.buffer).setInt32(0, DV_MAGIC, false);
    payload.set(bitmap, 4);
    const head = new Uint8Array(4);
    new DataView(head.buffer).setInt32(0, payload.length, false);
    const tail = new Uint8Array(4);
    new DataView(tail.buffer).setUint32(0, crc32(payload) >>> 0, false);
    parts.push(head, payload, tail);
    ranges.push({ dataFileName: file, offset, length: payload.length, cardinality: positions.length });
    offset += 8 + payload.length;
  }
  return { bytes: Buffer.concat(parts), ranges };
}

/** Decodes the deletion vector at `offset` (of the size int) with payload `length`. */
export function decodeDeletionVector(file: Uint8Array, offset: number, length: number, path: string): number[] {
  if (file.length < 1 || file[0] !== 1) throw corruption(path, `deletion vector file version ${file[0]} (expected 1)`);
  const dv = new DataView(file.buffer, file.byteOffset, file.byteLength);
  // A 64-bit vector (Java's Bitmap64DeletionVector) is recorded with its length fields included
  // (range length = bitmap + 8), so the checks below would call a sound one damaged: refuse it first.
  if (offset >= 1 && offset + 8 <= file.length && dv.getInt32(offset + 4, true) === DV64_MAGIC) {
    throw new LsmError('NotSupported', `64-bit deletion vectors (deletion-vectors.bitmap64) are not supported (${path})`, { path });
  }
  if (offset < 1 || offset + 8 + length > file.length) throw corruption(path, `deletion vector range ${offset}+${length} runs past the file (${file.length} bytes)`);
  const size = dv.getInt32(offset, false);
  if (size !== length) throw corruption(path, `deletion vector at ${offset} has size ${size}, the index manifest says ${length}`);
  const payload = file.subarray(offset + 4, offset + 4 + size);
  const want = dv.getUint32(offset + 4 + size, false);
  if ((crc32(payload) >>> 0) !== want) throw corruption(path, `deletion vector at ${offset}: CRC32 mismatch`);
  const magic = dv.getInt32(offset + 4, false);
  if (magic !== DV_MAGIC) throw corruption(path, `deletion vector at ${offset}: bad magic ${magic}`);
  return decodeRoaring(payload.subarray(4), path);
}

// ---------------------------------------------------------------------------------------------
// A snapshot's deletion vectors.

/** A cell of a value column, plain array or packed (`get`), whichever form the run cache holds. */
const cellAt = (c: unknown, i: number): unknown => (Array.isArray(c) ? c[i] : (c as { get(i: number): unknown }).get(i));

/** `d` minus the positions in `deleted` (a filtered copy; `d` itself when nothing is deleted). */
export function withoutDeleted(d: RunData, deleted: ReadonlySet<number> | undefined): RunData {
  if (!deleted || deleted.size === 0) return d;
  const keep: number[] = [];
  for (let i = 0; i < d.rowCount; i++) if (!deleted.has(i)) keep.push(i);
  return {
    rowCount: keep.length,
    keyCols: d.keyCols.map((c) => keep.map((i) => c[i])),
    seq: keep.map((i) => d.seq[i]!),
    kind: keep.map((i) => d.kind[i]!),
    valueCols: d.valueCols.map((c) => keep.map((i) => cellAt(c, i))),
  };
}

export interface SnapshotDeletionVectors {
  /** Deleted positions of a data file of (partition, bucket), or undefined when none. */
  deleted(partition: Uint8Array, bucket: number, fileName: string): ReadonlySet<number> | undefined;
}

const cache = new WeakMap<Table, Map<string, SnapshotDeletionVectors>>();

/** The deletion vectors a snapshot's index manifest lists (cached per table and index manifest). */
export function snapshotDeletionVectors(table: Table, snapshot: Snapshot): SnapshotDeletionVectors {
  const name = snapshot.indexManifest;
  if (!name) return { deleted: () => undefined };
  let perTable = cache.get(table);
  if (!perTable) {
    perTable = new Map();
    cache.set(table, perTable);
  }
  const hit = perTable.get(name);
  if (hit) return hit;
  const path = table.paths.manifestFile(name);
  const bytes = table.fileIO.readFileIfExists(path);
  if (bytes === undefined) throw corruption(path, `index manifest of snapshot ${snapshot.id} is missing`);
  const entries: IndexManifestEntry[] = decodeIndexManifest(bytes, path);
  const ranges = new Map<string, { indexFile: string; offset: number; length: number }>();
  // The path of each index file, where its table puts it (Table.indexFilePath: index/, the bucket directory, an external path).
  const indexPaths = new Map<string, string>();
  for (const e of entries) {
    if (e.indexType !== 'DELETION_VECTORS' || e.kind !== 0) continue;
    indexPaths.set(e.fileName, table.indexFilePath(e));
    for (const r of e.dvRanges ?? []) {
      ranges.set(`${Buffer.from(e.partition).toString('hex')}/${e.bucket}/${r.dataFileName}`, { indexFile: e.fileName, offset: r.offset, length: r.length });
    }
  }
  const files = new Map<string, Uint8Array>();
  const decoded = new Map<string, ReadonlySet<number>>();
  const result: SnapshotDeletionVectors = {
    deleted(partition, bucket, fileName) {
      const key = `${Buffer.from(partition).toString('hex')}/${bucket}/${fileName}`;
      const r = ranges.get(key);
      if (!r) return undefined;
      let set = decoded.get(key);
      if (!set) {
        const indexPath = indexPaths.get(r.indexFile)!;
        let file = files.get(r.indexFile);
        if (!file) {
          const b = table.fileIO.readFileIfExists(indexPath);
          if (b === undefined) throw corruption(indexPath, 'deletion vector index file listed in the index manifest is missing');
          file = b;
          files.set(r.indexFile, file);
        }
        set = new Set(decodeDeletionVector(file, r.offset, r.length, indexPath));
        decoded.set(key, set);
      }
      return set;
    },
  };
  if (perTable.size > 8) perTable.clear();
  perTable.set(name, result);
  return result;
}
