// Bucket assignment in fixed-bucket mode (paimon-format.md §6.3): MurmurHash3 x86_32 with seed 42
// over the BinaryRow bytes of the bucket-key fields (RowKind 0, no arity prefix), then Java's
// `Math.abs(hash % numBuckets)` (the remainder keeps the dividend's sign).
// Invariant: the input is BinaryRow bytes, whose length is always a multiple of 8 — Java hashes
// them by 4-byte words and has no tail handling, so other lengths are refused.

import { invalidArgument } from './errors.ts';

/** Java's `BinaryRow.hashCode()` (MurmurHashUtils.hashBytesByWords, seed 42), as a signed int32. */
export function hashBinaryRow(row: Uint8Array): number {
  const n = row.length;
  if ((n & 3) !== 0) throw invalidArgument(`BinaryRow length ${n} is not a multiple of 4`);
  let h = 42;
  for (let i = 0; i < n; i += 4) {
    let k = row[i]! | (row[i + 1]! << 8) | (row[i + 2]! << 16) | (row[i + 3]! << 24);
    k = Math.imul(k, 0xcc9e2d51);
    k = (k << 15) | (k >>> 17);
    k = Math.imul(k, 0x1b873593);
    h ^= k;
    h = (h << 13) | (h >>> 19);
    h = (Math.imul(h, 5) + 0xe6546b64) | 0;
  }
  h ^= n;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h | 0;
}

/** The bucket of a row given its encoded bucket-key BinaryRow bytes. */
export function bucketOf(encodedRowBytes: Uint8Array, numBuckets: number): number {
  if (!Number.isInteger(numBuckets) || numBuckets < 1 || numBuckets > 2147483647) {
    throw invalidArgument(`bucket count must be a positive int, got ${numBuckets}`);
  }
  // JS `%` on int32 operands has Java's sign semantics; abs of the remainder can't overflow.
  return Math.abs(hashBinaryRow(encodedRowBytes) % numBuckets);
}
