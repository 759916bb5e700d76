// What the tag tests of core/lsm share.

import { readdirSync, utimesSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Ages every file of the table's `tag/` and the directory by an hour: past the racy window
 * (file-identity.ts), so a listing trusts them on a stat, as a site's tags are after a while.
 */
export function ageTags(root: string): void {
  const dir = join(root, 'tag');
  const old = new Date(Date.now() - 3_600_000);
  for (const n of readdirSync(dir)) utimesSync(join(dir, n), old, old);
  utimesSync(dir, old, old);
}
