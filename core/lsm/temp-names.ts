// The stem of a temporary file or folder named after the one it becomes (`.<name>.<tail>`), kept
// within a file name's bytes. Shared by the writers outside the table store that write beside
// their destination and rename into place (core/sync's hq export, core/replay's run output).

import { createHash } from 'node:crypto';

/** Bytes a file name may have: NAME_MAX of ext4, XFS, NTFS and SMB. */
export const NAME_BYTES_MAX = 255;
/** Hex digits of the name's hash in a cut stem. */
const HASH_CHARS = 8;

/** `text` cut to at most `bytes` bytes of UTF-8, at a character (never half of one). */
export function cutToBytes(text: string, bytes: number): string {
  let cut = '';
  let used = 0;
  for (const ch of text) {
    used += Buffer.byteLength(ch);
    if (used > bytes) break;
    cut += ch;
  }
  return cut;
}

/**
 * `.<name>.`, or, when that would leave a tail of `tailBytesMax` no room within NAME_BYTES_MAX,
 * `.<name cut>~<hash of name>.`: uncut, a long destination name failed the write with
 * ENAMETOOLONG once the work was done.
 */
export function tempStem(name: string, tailBytesMax: number): string {
  const stemBytesMax = NAME_BYTES_MAX - tailBytesMax;
  if (Buffer.byteLength(name) + 2 <= stemBytesMax) return `.${name}.`;
  const hash = createHash('sha256').update(name).digest('hex').slice(0, HASH_CHARS);
  return `.${cutToBytes(name, stemBytesMax - 3 - HASH_CHARS)}~${hash}.`;
}
