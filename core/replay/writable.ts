// Whether a folder can be written into, asked before a long export or replay rather than found
// when its output is written at the end (minutes of work lost to a typo in --out).

import { existsSync, mkdirSync, mkdtempSync, rmdirSync, rmSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';

/**
 * Why `dir` cannot be made, or written into when it is there; undefined when it can. Tried for
 * real rather than judged from modes (root, read-only mounts and ACLs make modes lie): a folder is
 * made inside it, or `dir` itself (and the parents it lacks), and removed again at once, so a
 * command that fails later for another reason leaves no empty folder behind. The reason names the
 * path at fault: a file where a folder should be, or the nearest existing folder that cannot be
 * written (no permission, a read-only file system).
 */
export function writeProblem(dir: string): string | undefined {
  let there = dir;
  while (!existsSync(there)) {
    const up = dirname(there);
    if (up === there) break;
    there = up;
  }
  if (!statSync(there).isDirectory()) return `${there} is a file, not a folder`;
  try {
    if (there === dir) rmdirSync(mkdtempSync(join(dir, '.tilstand-probe-')));
    else {
      const made = mkdirSync(dir, { recursive: true });
      if (made !== undefined) rmSync(made, { recursive: true, force: true });
    }
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'EACCES' || code === 'EPERM') return `no permission to write in ${there}`;
    if (code === 'EROFS') return `${there} is on a read-only file system`;
    return (e as Error).message;
  }
  return undefined;
}
