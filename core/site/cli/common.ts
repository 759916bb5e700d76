// Helpers shared by the site commands: printing, the data directory flag, signals, and "is a
// site running here" (its control socket answers).

import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { LineWriter, type CliIO } from '../../lsm/cli/output.ts';
import { CliError, EXIT, fileInTheWay, usageError, type ParsedArgs } from '../../lsm/cli/args.ts';

export { refuseExtraArguments, subcommand } from '../../lsm/cli/args.ts';
import { DEFAULT_DATA_DIR, dataPaths } from '../config.ts';
import { socketAnswers } from '../control.ts';
import { checkDataFormat } from '../data-format.ts';

export async function print(out: NodeJS.WritableStream, lines: readonly string[]): Promise<void> {
  const w = new LineWriter(out);
  try {
    await w.lines(lines);
    await w.end();
  } catch {
    // the reader went away
  }
}

export const json = (v: unknown): string => JSON.stringify(v, (_k, x) => (typeof x === 'bigint' ? x.toString() : Buffer.isBuffer(x) ? x.toString('utf8') : x), 2);

/**
 * `--data`, or the default; an empty value (`--data "$D"` with D unset) is refused: resolved, it is
 * the current directory. So is a file, or a path under one: `init` and `start --demo` failed on
 * it with Node's "EEXIST: …, mkdir" (exit 5, no option named), and `start` took it for a new
 * directory and served the first-run screen.
 */
export function dataDir(value: string | undefined): string {
  if (value !== undefined && value.trim() === '') throw usageError(`option '--data': expected the site's data directory, got '${value}'`);
  const data = resolve(value ?? DEFAULT_DATA_DIR);
  const problem = dataDirProblem(data);
  if (problem !== undefined) throw usageError(`option '--data': ${problem}${value === undefined ? ` (${DEFAULT_DATA_DIR} is the default)` : ''}`);
  return data;
}

/** Why `data` cannot be a data directory: it, or the nearest part of its path that exists, is a file (the Electron shell asks too). */
export function dataDirProblem(data: string): string | undefined {
  const file = fileInTheWay(data);
  return file === undefined ? undefined : `${file} is a file, not a directory`;
}

/**
 * The data directory of an initialized site, or a CliError naming what is missing; one that
 * requires a newer program is refused (DataFormatError), whatever the command: what this program
 * would misread, a read-only command would misreport (dismissed dead letters shown open).
 */
export function existingDataDir(value: string | undefined): string {
  const data = dataDir(value);
  if (!existsSync(dataPaths(data).config)) {
    // Without --data it is the default that is not there: most often the site lives elsewhere (a
    // demo under --data /tmp/demo) and the flag was forgotten, which init would not mend.
    const other = value === undefined ? `; \`--data <dir>\` names another one (the default is ${DEFAULT_DATA_DIR}), or run` : '; run';
    throw new CliError(EXIT.notFound, `${data} is not a Tilstand data directory (no config.json)${other} \`tilstand init --data ${value ?? '<dir>'} --site <id>\` first`);
  }
  // Before config.json is read: a newer program's config (a section this one does not know) would
  // be refused as a bad key, and the advice to remove it would be wrong.
  checkDataFormat(data);
  return data;
}

/** The control socket of a site running on `data`, or undefined when none answers. */
export async function runningSocket(data: string): Promise<string | undefined> {
  const path = dataPaths(data).controlSocket;
  return existsSync(path) && (await socketAnswers(path)) ? path : undefined;
}

/**
 * Resolves with the name of the first SIGINT or SIGTERM (handlers removed afterwards). `cancel()`
 * removes them for a command that ends without one (a start that fails, a site stopped over its
 * control socket): left, each such command run in one process (tests, the Electron shell) added
 * two listeners for good.
 */
export function nextSignal(): Promise<NodeJS.Signals> & { cancel(): void } {
  let on!: (s: NodeJS.Signals) => void;
  const off = () => {
    process.off('SIGINT', on);
    process.off('SIGTERM', on);
  };
  const p = new Promise<NodeJS.Signals>((resolve) => {
    on = (s: NodeJS.Signals) => {
      off();
      resolve(s);
    };
    process.on('SIGINT', on);
    process.on('SIGTERM', on);
  });
  return Object.assign(p, { cancel: off });
}

/**
 * SIGINT and SIGTERM after the first (nextSignal takes that one and lets go of both), for the
 * whole command: said and otherwise ignored, so the stop the first one began finishes. Without a
 * listener Node's default ended the process at once, mid-stop (exit 130, the control socket and
 * sync lock left, the last events uncommitted), and one Ctrl-C under `npm start` sends two: the
 * terminal's to the whole process group and npm's forwarded copy. (`tilstand start`, `tilstand demo`.)
 */
export function repeatedStopSignals(io: Pick<CliIO, 'stderr'>): { close(): void } {
  let seen = 0;
  const on = (s: NodeJS.Signals) => {
    if (seen++ === 0) return; // the first: nextSignal's
    io.stderr.write(`tilstand: received ${s} again; a clean stop is under way (SIGKILL ends the process at once, without one)\n`);
  };
  process.on('SIGINT', on);
  process.on('SIGTERM', on);
  return {
    // Not at once: a stop that took less than the gap between the two copies of one Ctrl-C (the
    // modules of `tilstand demo` stop in milliseconds) left the second to Node's default, exit
    // 130 after a clean stop. The timer does not keep the process alive.
    close: () => {
      setTimeout(() => {
        process.off('SIGINT', on);
        process.off('SIGTERM', on);
      }, REPEATED_SIGNAL_GRACE_MS).unref();
    },
  };
}

/** How long after its command ends a repeated stop signal is still taken for the same one. */
const REPEATED_SIGNAL_GRACE_MS = 1_000;

export function port(value: string | undefined, flag: string): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!/^\d+$/.test(value) || n > 65535) throw new CliError(EXIT.usage, `option '--${flag}': expected a port number from 0 to 65535, got '${value}'`);
  return n;
}

/**
 * A whole-number option (at least `min`: 1 for a `--limit`, where 0 would list nothing;
 * DEMO_MIN_STEP_MS for a demo step), at most `max` (a timer's period: DEMO_MAX_STEP_MS).
 */
export function positiveInt(value: string | undefined, flag: string, min = 0, max = Number.MAX_SAFE_INTEGER): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(Number(value)) || Number(value) < min || Number(value) > max) {
    const range = max < Number.MAX_SAFE_INTEGER ? ` from ${min} to ${max}` : min > 0 ? ` ≥ ${min}` : '';
    throw new CliError(EXIT.usage, `option '--${flag}': expected a whole number${range}, got '${value}'`);
  }
  return Number(value);
}

/**
 * The demo modules' step bounds (core/site/demo/module.ts refuses others): `--step-ms` and
 * `--demo-step-ms` check them as they are parsed, so a refusal names the option, exits 2, and
 * comes before `start --demo` has made a demo data directory.
 */
export { DEMO_MAX_STEP_MS, DEMO_MIN_STEP_MS } from '../demo/module.ts';

export type { CliIO };
