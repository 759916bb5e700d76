// Shared pieces of the sync and HQ commands: exit codes by error kind, the target from flags,
// and the site's config.json (only `site` and `hq.target` are read here; core/site owns the file).

import { readFileSync, realpathSync, statSync } from 'node:fs';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { CliError, EXIT, fileInTheWay, usageError, type FlagSpecs } from '../../lsm/cli/args.ts';
import { jsonErrorWhere } from '../../lsm/errors.ts';
import { exitCodeOf as lsmExitCode, writeError } from '../../lsm/cli/table-cli.ts';
import type { CliIO } from '../../lsm/cli/output.ts';
import { OutputClosed } from '../../lsm/cli/output.ts';
import { SyncError } from '../errors.ts';
import { RESTORE_NOTE, RESTORE_UNFINISHED } from '../restore.ts';
import { DirectoryTarget, within } from '../targets/directory.ts';
import { openTarget, unparsedShown } from '../targets/open.ts';
import type { SyncTarget } from '../targets/target.ts';

export function exitCodeOf(e: unknown): number {
  if (e instanceof SyncError) {
    switch (e.kind) {
      case 'InvalidArgument':
        return EXIT.usage;
      case 'Forbidden':
        return EXIT.conflict;
      case 'NotFound':
        return EXIT.notFound;
      case 'Verification':
        return EXIT.corruption;
      case 'Transport':
        return EXIT.io;
      case 'AccessDenied':
        return EXIT.conflict;
      case 'Conflict':
        return EXIT.conflict;
    }
  }
  return lsmExitCode(e);
}

/** better-sqlite3's error for a file that is damaged (SQLITE_CORRUPT) or not a database at all (SQLITE_NOTADB). */
export function isSqliteCorruption(e: unknown): boolean {
  const code = e instanceof Error ? (e as Error & { code?: unknown }).code : undefined;
  return typeof code === 'string' && (code.startsWith('SQLITE_CORRUPT') || code === 'SQLITE_NOTADB');
}

/**
 * SQLite's words for a damaged file name none ("file is not a database"): the same error, as a
 * corruption in `path` (exit 4); any other error as it was.
 */
export function damageIn(path: string, e: unknown): unknown {
  return isSqliteCorruption(e) ? new CliError(EXIT.corruption, `corruption in ${path}: ${(e as Error).message}`) : e;
}

/** Runs a command body; prints `tilstand: <message>` and returns the exit code on failure. */
export async function guarded(io: CliIO, body: () => Promise<number>): Promise<number> {
  try {
    return await body();
  } catch (e) {
    if (e instanceof OutputClosed) return EXIT.ok;
    await writeError(io, (e as Error).message);
    return exitCodeOf(e);
  }
}

/**
 * The target `hq` names. `from` says where it came from in a refusal: `option '--hq'`, or for `sync
 * now` config.json's `hq.target` or the outbox's last target, which the person did not type here.
 */
export function targetFromFlags(hq: string | undefined, accessKey: string | undefined, secretKey: string | undefined, site?: string, from = "option '--hq'"): SyncTarget {
  if (hq === undefined) throw usageError("option '--hq' is required: a directory or s3://bucket/prefix?endpoint=…");
  // An empty value is an unset variable (`--hq "$HQ"`); another scheme (`S3://…`, `ftp://…`) would
  // be taken for a relative directory of that name and read as "no HQ there". Shown as a text
  // that is no target is (user info blanked, no query): `ftp://user:secret@host/…` holds a secret.
  if (hq.trim() === '' || (/^[A-Za-z][A-Za-z0-9+.-]*:\/\//.test(hq) && !hq.startsWith('s3://') && !hq.startsWith('file://'))) {
    throw usageError(`${from}: expected a directory or s3://bucket/prefix?endpoint=…, got '${unparsedShown(hq)}'`);
  }
  // An empty key is an unset variable (`--access-key "$KEY"`): taken as not given, the
  // environment's keys were used instead of the ones meant, or the error asked for a variable.
  for (const [flag, v] of [['access-key', accessKey], ['secret-key', secretKey]] as const) {
    if (v !== undefined && v.trim() === '') throw usageError(`option '--${flag}': expected the S3 ${flag === 'access-key' ? 'access key' : 'secret key'}, got '${v}'`);
  }
  const target = openTarget(hq, { ...(site ? { site } : {}), ...(accessKey ? { accessKey } : {}), ...(secretKey ? { secretKey } : {}) });
  // S3 keys with a directory: read and written with this user's file permissions, it uses none,
  // and they were ignored without a word while the person believed them used (a key limited to
  // the site's prefix, an analyst's read-only key). Not the environment's keys: no one typed those here.
  const keys = [...(accessKey !== undefined ? ["'--access-key'"] : []), ...(secretKey !== undefined ? ["'--secret-key'"] : [])];
  if (target instanceof DirectoryTarget && keys.length > 0) {
    const one = keys.length === 1;
    throw usageError(
      `option ${keys.join(', ')}: HQ (${from}) is the directory ${target.root}, which takes no S3 keys (it is read and written with this user's file permissions), so ${one ? 'it' : 'they'} would not be used; leave ${one ? 'it' : 'them'} out, or give the s3://… target ${one ? 'it is' : 'they are'} for`,
    );
  }
  // A file (or a path under one) read as a directory: `hq` listed nothing, as an HQ nobody shipped
  // to; `sync now` switched the outbox to it, dropping what the old HQ had, and failed each step
  // with ENOTDIR (exit 5).
  const file = target instanceof DirectoryTarget ? fileInTheWay(target.root) : undefined;
  if (file !== undefined) throw usageError(`${from}: ${file} is a file; expected a directory or s3://bucket/prefix?endpoint=…`);
  return target;
}

/**
 * The first line of `tilstand <group> …`'s refusal when no command of the group was found (`sub`
 * unknown or undefined; `subcommand` found it in `argv` with the group's `specs`): a word taken for
 * the command because an option before it is none of the group's (`sync --site X now`: "unknown sync
 * command 'X'" named the value, not the flag), or a command taken as a string option's value (`sync
 * --data now`: "sync needs a command"), said as such.
 */
export function commandProblem(group: string, argv: readonly string[], sub: string | undefined, specs: FlagSpecs, subs: readonly string[]): string {
  if (sub === undefined) {
    for (let i = 0; i + 1 < argv.length; i++) {
      const x = argv[i]!;
      if (x === '--') break;
      const name = x.startsWith('--') && !x.includes('=') ? x.slice(2) : undefined;
      if (name !== undefined && Object.hasOwn(specs, name) && specs[name]!.type === 'string') {
        if (subs.includes(argv[i + 1]!)) return `tilstand: ${group} needs a command ('${argv[i + 1]}' was read as the value of '--${name}')`;
        i++;
      }
    }
    return `tilstand: ${group} needs a command`;
  }
  // Where `subcommand` found it: the first word that is no option nor a string option's value.
  let at = -1;
  for (let i = 0; i < argv.length && at < 0; i++) {
    const x = argv[i]!;
    if (!x.startsWith('-') || x === '-') at = i;
    else if (x.startsWith('--') && !x.includes('=') && Object.hasOwn(specs, x.slice(2)) && specs[x.slice(2)]!.type === 'string') i++;
  }
  const before = at > 0 ? argv[at - 1]! : undefined;
  if (before !== undefined && before.startsWith('-') && before !== '-' && before !== '--' && !before.includes('=') && !Object.hasOwn(specs, before.replace(/^--?/, ''))) {
    return `tilstand: ${group} takes no option '${shownWord(before)}' ('${shownWord(sub)}' after it was read as the command)`;
  }
  return `tilstand: unknown ${group} command '${shownWord(sub)}'`;
}

/** A word of the command line (or a name read from a folder) for a message: control characters escaped, cut at 60 characters. */
export function shownWord(w: string): string {
  const s = JSON.stringify(w).slice(1, -1);
  return s.length > 60 ? `${s.slice(0, 59)}…` : s;
}

/**
 * The folders `realFolder` tries, nearest first: `path` (resolved) and each folder above it, with
 * the names below it that it leaves to join back (the sync and the async walk share it).
 */
export function* foldersUp(path: string): Generator<readonly [string, string[]]> {
  const rest: string[] = [];
  for (let p = resolve(path); ; p = dirname(p)) {
    yield [p, [...rest].reverse()];
    if (dirname(p) === p) return;
    rest.push(basename(p));
  }
}

/** Where folder `path` leads: the real path of its nearest existing folder, with the rest of `path` below it. */
export function realFolder(path: string): string {
  for (const [p, below] of foldersUp(path)) {
    try {
      return join(realpathSync(p), ...below);
    } catch {
      // not there (yet): the folder above
    }
  }
  return resolve(path);
}

/**
 * Whether directory `hq` is the data directory `data` itself or lies in it, compared as given
 * and, with `real`, where both lead through links (a link to `<data>/warehouse`, or the data
 * directory given through one) — except `allowed`, a folder of `data` that may be HQ all the same
 * (the demo's `demo-hq`). `sync now` (sync.ts refuseHqInData) and start and `config check`
 * (core/site config.ts hqInDataProblem) refuse both, each in its own words.
 */
export function hqInData(data: string, hq: string, allowed: string | undefined, real: ((path: string) => string) | undefined = realFolder): 'itself' | 'inside' | undefined {
  const pairs: (readonly [string, string])[] = [[data, hq]];
  if (real !== undefined) pairs.push([real(data), real(hq)]);
  for (const [d, h] of pairs) {
    const rel = relative(d, h);
    if (allowed !== undefined && rel === allowed) continue;
    if (rel === '') return 'itself';
    if (within(h, d)) return 'inside';
  }
  return undefined;
}

/**
 * The site data directory that folder `path` is, or lies in, found by walking up from it as given
 * and from where it leads through links (`realFolder`): a folder holding the data format mark,
 * or site.db or journal.db with config.json (or a restore's note) beside, as files — the marks
 * core/site's `isDataDir` reads (config.json alone could be another program's, and so could a
 * site.db alone: hq-pull-out-with-site-db.test.ts; core/sync may not import core/site): `isDataDir`
 * below. `where` says how: the data
 * directory itself, its `warehouse/` (the site's live tables), or another folder inside it.
 * `hq pull --out` refuses all three (hq.ts `pullDestination`).
 */
export function siteDataDirOf(path: string): { data: string; where: 'itself' | 'warehouse' | 'inside' } | undefined {
  for (const start of [resolve(path), realFolder(path)]) {
    for (const [p] of foldersUp(start)) {
      if (!isDataDir(p)) continue;
      const rel = relative(p, start);
      return { data: p, where: rel === '' ? 'itself' : rel === 'warehouse' ? 'warehouse' : 'inside' };
    }
  }
  return undefined;
}

/**
 * Whether folder `p` is a site's data directory: it holds the data format mark (core/site
 * data-format.ts, this program's own file), or site.db or journal.db (config.ts dataPaths) with
 * config.json beside — a file named site.db or journal.db alone may be another program's, and an
 * analyst's folder holding one (or a folder below it) was refused — or with a restore's note or
 * its unfinished mark beside (restore.ts): a directory `tilstand restore` rebuilt has no
 * config.json until `tilstand init` writes one, and its live tables were pulled over
 * (hq-pull-out-restored.test.ts).
 */
function isDataDir(p: string): boolean {
  if (isFile(join(p, DATA_FORMAT_MARK))) return true;
  return SITE_DBS.some((f) => isFile(join(p, f))) && ['config.json', RESTORE_NOTE, RESTORE_UNFINISHED].some((f) => isFile(join(p, f)));
}

/** The data format mark (core/site data-format.ts) and the databases of a site's data directory (core/site config.ts dataPaths). */
const DATA_FORMAT_MARK = 'data-format.json';
const SITE_DBS = ['site.db', 'journal.db'];

function isFile(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

export interface SiteConfigLite {
  site: string;
  hqTarget: string | null;
}

export function readSiteConfig(dataDir: string): SiteConfigLite {
  const path = join(dataDir, 'config.json');
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    throw new CliError(EXIT.notFound, `cannot read ${path}: ${(e as Error).message} (is ${dataDir} a site's data directory?)`);
  }
  let j: { site?: unknown; hq?: { target?: unknown } };
  try {
    j = JSON.parse(text);
  } catch (e) {
    throw new CliError(EXIT.usage, `${path} is not valid JSON: ${jsonErrorWhere(text, e)}`);
  }
  if (typeof j.site !== 'string') throw new CliError(EXIT.usage, `${path} names no site`);
  return { site: j.site, hqTarget: typeof j.hq?.target === 'string' ? j.hq.target : null };
}

/**
 * A progress bar on stderr: redrawn in place on a terminal, a line per 10 % otherwise. It is only
 * a courtesy: when stderr fails (a closed pipe, `… 2>&1 | head -1`: EPIPE) the bar stops and the
 * command goes on; without the 'error' listener that failure would kill the process.
 */
export function progressBar(stderr: NodeJS.WritableStream): (done: number, total: number, bytes: number, label: string) => void {
  const tty = (stderr as NodeJS.WriteStream).isTTY === true;
  let lastDecile = -1;
  let broken = false;
  // Stays attached after the command: a write's failure is emitted later (and again on a later write).
  stderr.on('error', () => {
    broken = true;
  });
  return (done, total, bytes, label) => {
    if (broken) return;
    const frac = total === 0 ? 1 : done / total;
    const width = 30;
    const bar = '#'.repeat(Math.round(frac * width)).padEnd(width, ' ');
    const text = `[${bar}] ${String(Math.floor(frac * 100)).padStart(3)}% ${done}/${total} files ${(bytes / 1048576).toFixed(1)} MiB ${label}`;
    if (tty) stderr.write(`\r${text.slice(0, 120).padEnd(120)}${done === total ? '\n' : ''}`);
    else {
      const d = Math.floor(frac * 10);
      if (d !== lastDecile || done === total) {
        lastDecile = d;
        stderr.write(text + '\n');
      }
    }
  };
}
