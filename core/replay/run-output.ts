// The output folder of `replay run`: run.json, proposals.json, agent-runs.json, decisions.json and
// human-decisions.json, written at the end of a run into a temporary folder beside it
// (`.<name>.<pid>.tmp`, on the same file system) and renamed into place whole. They were written
// one by one into --out: a run killed or failing while it wrote them left a half-written file or
// a run.json without the rest — which `replay diff` read as a run, and which made --out a folder a
// retry refuses as not empty.
//
// A kill -9 while the files are written leaves the temporary folder; the next run to the same
// --out removes those whose pid is no longer alive (a pid reused since keeps one, a safe miss).
//
// Invariants: `out` is only ever made by rename(2) of a whole folder; after `writeRunOutput`
// returns or throws, its temporary folder no longer exists.

import { existsSync, mkdirSync, readdirSync, realpathSync, renameSync, rmdirSync, rmSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { processAlive } from '../lsm/writer-lock.ts';
import { writeStableJson } from './json.ts';

/** What follows `.<name>.` in a temporary run folder's name: its run's pid. */
const TEMP_TAIL = /^(\d+)\.tmp$/;

/** Removes the temporary folders of runs to `out` whose process has died. */
function removeDeadTemps(out: string): void {
  const prefix = `.${basename(out)}.`;
  let names: string[];
  try {
    names = readdirSync(dirname(out));
  } catch {
    return; // no parent folder yet: made below
  }
  for (const name of names) {
    const pid = name.startsWith(prefix) ? TEMP_TAIL.exec(name.slice(prefix.length))?.[1] : undefined;
    if (pid === undefined || Number(pid) === process.pid || processAlive(Number(pid))) continue;
    rmSync(join(dirname(out), name), { recursive: true, force: true });
  }
}

/**
 * Writes `files` (name → value, as stable JSON) as the run folder `out`, which must not exist or
 * be empty: whole, or not at all.
 */
export function writeRunOutput(given: string, files: Readonly<Record<string, unknown>>): void {
  // An empty --out that exists is replaced by the folder it really is: a link to one stays a link
  // (removed, rmdir fails with ENOTDIR), and `.` or `..` get the name and parent they stand for.
  const out = existsSync(given) ? realpathSync(given) : resolve(given);
  removeDeadTemps(out);
  const temp = join(dirname(out), `.${basename(out)}.${process.pid}.tmp`);
  try {
    mkdirSync(dirname(out), { recursive: true });
    mkdirSync(temp);
  } catch (e) {
    // The CLI tried this before the run; still possible here for a caller of runReplay, or when
    // the folder changed during the run: said as what it is, not as a bare ENOTDIR or EACCES.
    throw new Error(`cannot create the run folder ${given}: ${(e as Error).message}`);
  }
  try {
    for (const [name, value] of Object.entries(files)) writeStableJson(join(temp, name), value);
    if (existsSync(out)) rmdirSync(out); // empty (the CLI refuses another); rename onto a folder is not portable
    renameSync(temp, out);
  } catch (e) {
    rmSync(temp, { recursive: true, force: true });
    throw e;
  }
}
