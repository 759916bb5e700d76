// The output folder of `replay run`: run.json, proposals.json, agent-runs.json, decisions.json and
// human-decisions.json, written at the end of a run, whole or not at all. They were written one by
// one into --out: a run killed or failing while it wrote them left a half-written file or a
// run.json without the rest — which `replay diff` read as a run, and which made --out a folder a
// retry refuses as not empty.
//
// Two ways, by what --out is:
// - a new folder: the files are written into a temporary folder beside it
//   (`.<name>.<pid>@<host>.tmp`, on the same file system), renamed into place whole;
// - an empty folder that exists (`.`, a link to one, a mount point): the files are written into a
//   temporary folder inside it (`.tilstand-run.<pid>@<host>.tmp`) and moved out of it into --out
//   one by one, run.json last, then the temporary folder is removed. The folder itself stays: its
//   inode (a shell sitting in it still is), its mode and owner, a mount point mounted. It used to
//   be removed and the run renamed onto its path: a shell in it saw a removed folder, the mode
//   became the default one, a mount point failed with EBUSY once the whole replay had run, and on
//   Windows the removal of a folder in use fails. run.json is what `replay diff` reads first (a
//   folder without one is no run), so it is the completion marker: a run killed while it moved
//   the files in leaves some of them and no run.json, which the CLI names as such.
//
// A kill -9 while the files are written leaves the temporary folder; the next run to the same
// --out removes those of this host whose pid is no longer alive (a pid reused since keeps one, a
// safe miss). One named with another host (a folder shared between machines) is never removed: its
// pid means nothing here. Names of the older form (`.<name>.<pid>.tmp`, no host) are left alone
// for the same reason.
//
// A file name may have 255 bytes (NAME_MAX of ext4, XFS, NTFS, SMB). An --out name too long to
// leave room for the tail is cut, at a character, and followed by `~` and a hash of the whole
// name, as core/sync's hq export names its temporary files (export-file.ts): uncut, an --out name
// over ~240 bytes failed the run with ENAMETOOLONG once it had run.
//
// Invariants: a new `out` is only ever made by rename(2) of a whole folder; an existing one is
// never removed or replaced, and gets run.json only after every other file; after
// `writeRunOutput` returns or throws, its temporary folder no longer exists.

import { existsSync, mkdirSync, readdirSync, realpathSync, renameSync, rmdirSync, rmSync } from 'node:fs';
import { hostname } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { tempStem } from '../lsm/temp-names.ts';
import { processAlive } from '../lsm/writer-lock.ts';
import { writeStableJson } from './json.ts';

/** This host in a temporary folder's name: letters, digits and `-` only, so the name parses back. */
const HOST = hostname().replace(/[^A-Za-z0-9-]/g, '-').slice(0, 64);
/** What follows the stem in a temporary run folder's name: its run's pid and host. */
const TEMP_TAIL = /^(\d+)@([A-Za-z0-9-]*)\.tmp$/;
/** The stem of the temporary folder inside an existing --out. */
const INSIDE_STEM = '.tilstand-run.';
/** The file a run folder is read by first (`replay diff`): moved in last. */
const MARKER = 'run.json';

/** Bytes of the tail after the stem: a pid of up to 10 digits, `@`, the host (≤ 64), `.tmp`. */
const TAIL_BYTES_MAX = 10 + 1 + 64 + 4;

/** What a temporary folder beside `out` is named before its tail (core/lsm temp-names.ts). */
const besideStem = (out: string): string => tempStem(basename(out), TAIL_BYTES_MAX);

/** The temporary folder's name for `stem`, of this process on this host. */
const tempName = (stem: string): string => `${stem}${process.pid}@${HOST}.tmp`;

/** Removes the folders in `dir` named `<stem><pid>@<this host>.tmp` whose process has died. */
function removeDeadIn(dir: string, stem: string): void {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return; // no folder yet: made below
  }
  for (const name of names) {
    const m = name.startsWith(stem) ? TEMP_TAIL.exec(name.slice(stem.length)) : null;
    if (!m || m[2] !== HOST) continue;
    const pid = Number(m[1]);
    if (pid === process.pid || processAlive(pid)) continue;
    rmSync(join(dir, name), { recursive: true, force: true });
  }
}

/** The folder a run to `given` is written as: the one it really is when it exists (a link followed, `.` named). */
const outPath = (given: string): string => (existsSync(given) ? realpathSync(given) : resolve(given));

/**
 * Removes the temporary folders that runs to `given` left when they died on this host: beside it,
 * and inside it when it exists. Never one of a live run, nor one of another host.
 */
export function removeDeadRunTemps(given: string): void {
  const out = outPath(given);
  removeDeadIn(dirname(out), besideStem(out));
  if (existsSync(out)) removeDeadIn(out, INSIDE_STEM);
}

/**
 * Why a folder that holds `names` is not a run, when they are what a run killed while its files
 * were moved in leaves (some of a run's files, no run.json); undefined otherwise.
 */
export function halfMoved(names: readonly string[], runFiles: readonly string[]): string | undefined {
  if (names.length === 0 || names.includes(MARKER) || !names.every((n) => runFiles.includes(n))) return undefined;
  return `the files of a run stopped while they were moved in (no ${MARKER}); remove them`;
}

/**
 * Writes `files` (name → value, as stable JSON) as the run folder `given`, which must not exist or
 * be empty: whole, or not at all (an existing folder is left empty again when it fails).
 */
export function writeRunOutput(given: string, files: Readonly<Record<string, unknown>>): void {
  removeDeadRunTemps(given);
  if (existsSync(given)) writeInto(realpathSync(given), given, files);
  else writeBeside(resolve(given), given, files);
}

/** A new --out: written beside it and renamed into place. */
function writeBeside(out: string, given: string, files: Readonly<Record<string, unknown>>): void {
  const temp = join(dirname(out), tempName(besideStem(out)));
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
    renameSync(temp, out);
  } catch (e) {
    rmSync(temp, { recursive: true, force: true });
    throw e;
  }
}

/** An existing empty --out (`dir`, its real path): written inside it, moved into it, run.json last. */
function writeInto(dir: string, given: string, files: Readonly<Record<string, unknown>>): void {
  const temp = join(dir, tempName(INSIDE_STEM));
  try {
    mkdirSync(temp);
  } catch (e) {
    throw new Error(`cannot write the run into ${given}: ${(e as Error).message}`);
  }
  const names = Object.keys(files).sort((a, b) => Number(a === MARKER) - Number(b === MARKER) || (a < b ? -1 : a > b ? 1 : 0));
  const moved: string[] = [];
  try {
    for (const name of names) writeStableJson(join(temp, name), files[name]);
    for (const name of names) {
      renameSync(join(temp, name), join(dir, name));
      moved.push(name);
    }
    rmdirSync(temp);
  } catch (e) {
    for (const name of moved) rmSync(join(dir, name), { force: true });
    rmSync(temp, { recursive: true, force: true });
    throw e;
  }
}
