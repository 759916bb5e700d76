// The data directory's format mark (DESIGN.md, "Data format"): which program may run on a
// directory. `<data>/data-format.json`, read first by start, the Electron main and every command
// that opens a directory:
//   written   the highest data format of a program that raised the mark ("written by format N")
//   requires  the lowest data format a program must know to run on the directory at all
//   by        the program (name and version) that last raised either number
// A program whose DATA_FORMAT is below `requires` refuses before it changes anything
// (DataFormatError). No file = a directory from before the mark = data format 1.
// Why a file of its own and not a row in site.db: reading it changes nothing (a read-only SQLite
// connection to site.db, in WAL mode, creates site.db-shm and site.db-wal), and not every command
// opens site.db (contracts, deadletters list/replay, config check, replay export do not).
// Invariant: a program raises the mark before its own migrations (openSiteDb and openIngest do,
// before UserStore, the outbox or the Ingestor alter anything), so no directory holds a change
// without its mark. site.db, journal.db and the warehouse share no transaction, so the mark is
// written first, atomically, on its own: a crash after it leaves a marked directory not yet
// migrated, which this version migrates at its next start and older ones refuse.

import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { localFileIO } from '../lsm/index.ts';
import { parseFormatMark, type ProgramDataFormat } from '../sync/hq-data-format.ts';

/** The data format this program writes and understands. */
export const DATA_FORMAT = 1;
/**
 * The lowest data format a program must know to run on a directory this program has run on:
 * raised only by a change older programs would misread (DESIGN.md, "Data format").
 */
export const DATA_FORMAT_REQUIRES = 1;
export const DATA_FORMAT_FILE = 'data-format.json';

export interface DataFormatMark {
  written: number;
  requires: number;
  /** The program that last raised the mark (`tilstand 0.1.0`); null when it did not say. */
  by: string | null;
}

export class DataFormatError extends Error {
  /** TooNew: a newer program's directory; Unreadable: the mark file is damaged. */
  readonly kind: 'TooNew' | 'Unreadable';
  constructor(kind: DataFormatError['kind'], message: string) {
    super(message);
    this.name = `DataFormatError(${kind})`;
    this.kind = kind;
  }
}

let program: string | undefined;
/** `tilstand <version>` from package.json (the bundles resolve it as the sources do), read once. */
export function programVersion(): string {
  if (program === undefined) {
    try {
      const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { name?: unknown; version?: unknown };
      program = `${typeof pkg.name === 'string' ? pkg.name : 'tilstand'} ${typeof pkg.version === 'string' ? pkg.version : '(version unknown)'}`;
    } catch {
      program = 'tilstand (version unknown)';
    }
  }
  return program;
}

/**
 * This program's data format as core/sync takes it (which may not import this file): the sync
 * engine raises HQ's data format mark to it, and `restore` refuses an HQ that requires more
 * (core/sync/DESIGN.md, "HQ's data format mark").
 */
export function programDataFormat(): ProgramDataFormat {
  return { written: DATA_FORMAT, requires: DATA_FORMAT_REQUIRES, by: programVersion() };
}

/** `<data>/data-format.json`. */
export const dataFormatPath = (data: string): string => join(data, DATA_FORMAT_FILE);

/**
 * The mark of `data`, or undefined for a directory from before the mark. A file that is not the
 * mark (not JSON, a number missing or not a whole number from 1) is refused as damage: guessed,
 * an older program could run on a directory a newer one requires. Keys it does not know are
 * ignored.
 */
export function readDataFormat(data: string): DataFormatMark | undefined {
  const path = dataFormatPath(data);
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    // No mark: none written yet, or no directory there at all (a parent that is a file: ENOTDIR),
    // which is for the caller to report as what it is, not as a damaged mark.
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return undefined;
    throw new DataFormatError('Unreadable', `${path} cannot be read (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
  }
  const m = parseFormatMark(text);
  if (typeof m !== 'string') return m;
  throw new DataFormatError('Unreadable', `${path}: ${m}; expected {"written": <n>, "requires": <n>, "by": "<program>"} with whole numbers from 1 (the data format mark is damaged: restore the directory from its copy, docs/operations.md "Upgrading")`);
}

/** The refusal of a directory whose mark requires more than this program knows. */
function tooNew(data: string, m: DataFormatMark): DataFormatError {
  return new DataFormatError(
    'TooNew',
    `${data} has data format ${m.written}${m.by ? ` (raised by ${m.by})` : ''} and requires a program that knows data format ${m.requires} or later; ` +
      `this one (${programVersion()}) knows data format ${DATA_FORMAT} and would misread it, so it changed nothing. ` +
      `Run the newer version on it again, or, to go back to this version, restore the copy of the directory taken before the upgrade (docs/operations.md, "Upgrading")`,
  );
}

/**
 * The gate every program that opens a data directory passes first: reads the mark (changing
 * nothing) and refuses a directory that requires a newer program. A directory without the mark (from
 * before it, or not initialized) passes.
 */
export function checkDataFormat(data: string): DataFormatMark | undefined {
  const m = readDataFormat(data);
  if (m !== undefined && m.requires > DATA_FORMAT) throw tooNew(data, m);
  return m;
}

/**
 * Raises the mark of `data` to this program's numbers (never lowers one), after the same check as
 * `checkDataFormat`: written only when a number goes up or there is no mark, atomically (temporary
 * file, fsync, rename). A directory that does not exist yet is left alone (its maker marks it).
 * The file is rewritten with this version's keys only (DESIGN.md, "Data format": a key a later
 * version adds must be safe to lose).
 */
export function raiseDataFormat(data: string): DataFormatMark {
  const m = checkDataFormat(data);
  const written = Math.max(m?.written ?? 0, DATA_FORMAT);
  const requires = Math.max(m?.requires ?? 0, DATA_FORMAT_REQUIRES);
  if (m !== undefined && m.written === written && m.requires === requires) return m;
  const next: DataFormatMark = { written, requires, by: programVersion() };
  if (!existsSync(data)) return next;
  const note = 'The Tilstand data format of this directory: a program that knows a lower format than "requires" refuses to run on it (core/site/DESIGN.md, "Data format"). Do not edit or delete.';
  localFileIO.replaceAtomic(dataFormatPath(data), Buffer.from(`${JSON.stringify({ ...next, note }, null, 2)}\n`));
  return next;
}
