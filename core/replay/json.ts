// Stable JSON for replay outputs: keys sorted at every level, bigint as decimal text, two-space
// indent, a final newline. The same value always gives the same bytes, so two runs of the same
// fixture and agent can be compared with `cmp`.

import { createHash } from 'node:crypto';
import { closeSync, openSync, readSync, writeFileSync } from 'node:fs';

function sortValue(v: unknown): unknown {
  if (typeof v === 'bigint') return v.toString();
  if (Array.isArray(v)) return v.map(sortValue);
  if (v && typeof v === 'object') {
    if (Buffer.isBuffer(v)) return v.toString('base64');
    const o = v as Record<string, unknown>;
    // No prototype: on a plain object, assigning `__proto__` (a column name ingest allows) set
    // the prototype, and the key was dropped from the output.
    const out = Object.create(null) as Record<string, unknown>;
    for (const k of Object.keys(o).sort()) if (o[k] !== undefined) out[k] = sortValue(o[k]);
    return out;
  }
  return v;
}

/** JSON with sorted keys (bigint → string, Buffer → base64, undefined members dropped). */
export function stableJson(v: unknown, indent = 2): string {
  return JSON.stringify(sortValue(v), null, indent);
}

export function writeStableJson(path: string, v: unknown): void {
  writeFileSync(path, `${stableJson(v)}\n`);
}

export function sha256(data: Buffer | string): string {
  return createHash('sha256').update(data).digest('hex');
}

/** SHA-256 of a file, read in 1 MiB pieces. */
export function sha256File(path: string): { sha256: string; bytes: number } {
  const h = createHash('sha256');
  const fd = openSync(path, 'r');
  const buf = Buffer.allocUnsafe(1 << 20);
  let bytes = 0;
  try {
    for (;;) {
      const n = readSync(fd, buf, 0, buf.length, null);
      if (n === 0) break;
      h.update(buf.subarray(0, n));
      bytes += n;
    }
  } finally {
    closeSync(fd);
  }
  return { sha256: h.digest('hex'), bytes };
}
