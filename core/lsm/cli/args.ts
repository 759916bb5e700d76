// A small command-line argument parser (no packages): `--flag value`, `--flag=value`, repeated
// flags, boolean flags, `--` to end the options, and errors that name the flag and say what was
// expected. Every error is a CliError with an exit code, so the dispatcher prints it the same way
// as a table store error.
//
// Rules:
//   - a string flag takes the next argument as its value unless it is `--flag=value`; a value
//     that starts with `--` must use the `=` form (so a forgotten value is caught, not swallowed);
//   - a boolean flag never takes the next argument; `--flag=true|false` is accepted;
//   - a flag given twice is an error unless it is declared `multiple`;
//   - `-h` and `--help` are always recognised and set `help`;
//   - anything else starting with `-` (except a lone `-`) is an unknown option.

import { statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';

/** Exit codes of the `tilstand` command (README.md in this folder). */
export const EXIT = {
  ok: 0,
  notFound: 1,
  usage: 2,
  conflict: 3,
  corruption: 4,
  io: 5,
} as const;

/** An error meant for the person at the terminal: printed as `tilstand: <message>`. */
export class CliError extends Error {
  readonly exitCode: number;
  constructor(exitCode: number, message: string) {
    super(message);
    this.name = 'CliError';
    this.exitCode = exitCode;
  }
}

export const usageError = (message: string): CliError => new CliError(EXIT.usage, message);

/**
 * Refuses the arguments after the `takes` a command reads. Ignored, a word meant as an option
 * (`proposals open` for `--status open`) would run the command on something else than was asked.
 */
export function refuseExtraArguments(a: ParsedArgs, command: string, takes = 0): void {
  if (a.positionals.length > takes) throw usageError(`'${command}': unexpected argument '${a.positionals[takes]}'`);
}

export interface FlagSpec {
  type: 'string' | 'boolean';
  /** May be given more than once; the values are collected in order. */
  multiple?: boolean;
  /** What the value is, for messages and usage text, e.g. `<dir>`. */
  value?: string;
}

export type FlagSpecs = Record<string, FlagSpec>;

export interface ParsedArgs {
  positionals: string[];
  help: boolean;
  /** The last value of a string flag, or undefined. */
  string(name: string): string | undefined;
  /** A string flag that must be present. */
  required(name: string): string;
  /** Every value of a (multiple) string flag. */
  strings(name: string): string[];
  boolean(name: string): boolean;
  has(name: string): boolean;
}

/**
 * Parses `argv` against the declared flags. `command` names the command in messages, e.g.
 * `table scan`. Throws CliError(2) on an unknown option, a missing value, a repeated flag.
 */
export function parseArgs(argv: readonly string[], specs: FlagSpecs, command: string): ParsedArgs {
  const values = new Map<string, string[]>();
  const booleans = new Map<string, boolean>();
  const positionals: string[] = [];
  let help = false;
  const where = command ? ` for '${command}'` : '';
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--') {
      positionals.push(...argv.slice(i + 1));
      break;
    }
    if (arg === '-h' || arg === '--help') {
      help = true;
      continue;
    }
    if (!arg.startsWith('-') || arg === '-') {
      positionals.push(arg);
      continue;
    }
    if (!arg.startsWith('--') || arg.length === 2) {
      throw usageError(`unknown option '${arg}'${where}; options are written --name (try --help)`);
    }
    const eq = arg.indexOf('=');
    const name = arg.slice(2, eq < 0 ? undefined : eq);
    const inline = eq < 0 ? undefined : arg.slice(eq + 1);
    const spec = Object.hasOwn(specs, name) ? specs[name] : undefined;
    if (!spec) {
      const known = Object.keys(specs).map((k) => `--${k}`).join(', ');
      throw usageError(`unknown option '--${name}'${where}${known ? ` (options: ${known})` : ''}`);
    }
    if (spec.type === 'boolean') {
      let v = true;
      if (inline !== undefined) {
        if (inline === 'true') v = true;
        else if (inline === 'false') v = false;
        else throw usageError(`option '--${name}' is a switch: expected no value, or 'true' or 'false', got '${inline}'`);
      }
      if (booleans.has(name) && !spec.multiple) throw usageError(`option '--${name}' is given more than once`);
      booleans.set(name, v);
      continue;
    }
    let value = inline;
    if (value === undefined) {
      const next = argv[i + 1];
      if (next === undefined || (next.startsWith('--') && next.length > 2)) {
        throw usageError(`option '--${name}' expects a value${spec.value ? ` ${spec.value}` : ''}${next === undefined ? '' : `, got the option '${next}' (write --${name}=${next} if that is the value)`}`);
      }
      value = next;
      i++;
    }
    const list = values.get(name) ?? [];
    if (list.length > 0 && !spec.multiple) throw usageError(`option '--${name}' is given more than once`);
    list.push(value);
    values.set(name, list);
  }
  return {
    positionals,
    help,
    string: (name) => values.get(name)?.at(-1),
    required(name) {
      const v = values.get(name)?.at(-1);
      if (v === undefined) {
        const spec = specs[name];
        throw usageError(`option '--${name}'${spec?.value ? ` ${spec.value}` : ''} is required${where}`);
      }
      return v;
    },
    strings: (name) => [...(values.get(name) ?? [])],
    boolean: (name) => booleans.get(name) ?? false,
    has: (name) => values.has(name) || booleans.has(name),
  };
}

/**
 * The value of a flag that names a file or directory, or undefined when it is not given. An empty
 * value (`--warehouse "$W"` with W unset) is refused: resolved, it would be the current directory.
 */
export function pathOption(a: ParsedArgs, name: string, what: string): string | undefined {
  const v = a.string(name);
  if (v !== undefined && v.trim().length === 0) throw usageError(`option '--${name}': expected ${what}, got '${v}'`);
  return v;
}

/**
 * The path itself, or its nearest existing ancestor, when that is not a directory (a directory
 * option naming a file, or a path under one); undefined otherwise. Left to the command, such a
 * path failed as ENOTDIR or EEXIST of a scandir or mkdir deep inside, exit 5, naming no option.
 */
export function fileInTheWay(path: string): string | undefined {
  for (let p = resolve(path); ; p = dirname(p)) {
    let st;
    try {
      st = statSync(p);
    } catch {
      if (dirname(p) === p) return undefined;
      continue; // not there (yet): its parent decides
    }
    return st.isDirectory() ? undefined : p;
  }
}

/** Usage text of a command's flags, one per line. */
export function describeFlags(specs: FlagSpecs): string[] {
  return Object.entries(specs).map(([k, s]) => `--${k}${s.type === 'string' ? ` ${s.value ?? '<value>'}` : ''}${s.multiple ? ' (repeatable)' : ''}`);
}

/**
 * A command group's subcommand (`users list`, `agent run`, `sync status`, `hq sites`) and the
 * arguments around it: the first word that is neither an option nor the value of one of the
 * group's string options (`specs`), so `agent --data X run` is `agent run --data X`; taking the
 * first word whatever it was, the flag was the subcommand and its value an unexpected argument.
 * None (`users --help`): the group's usage is asked for, or the caller says which there are.
 */
export function subcommand(argv: readonly string[], specs: FlagSpecs): [string | undefined, string[]] {
  for (let i = 0; i < argv.length; i++) {
    const x = argv[i]!;
    if (x === '--') break;
    if (!x.startsWith('-') || x === '-') return [x, [...argv.slice(0, i), ...argv.slice(i + 1)]];
    const name = x.slice(2);
    if (x.startsWith('--') && !x.includes('=') && Object.hasOwn(specs, name) && specs[name]!.type === 'string') i++;
  }
  return [undefined, [...argv]];
}
