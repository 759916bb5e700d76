// The table store's closed set of errors (after leveldb's Status): a caller can tell a bad
// argument from a damaged file from a failing disk, and corruption stays recognisable through
// wrapping (`isCorruption` walks the `cause` chain).

export type LsmErrorKind =
  | 'InvalidArgument' // the caller asked for something malformed or not allowed
  | 'NotFound' // a table, snapshot, tag or key that does not exist
  | 'AlreadyExists' // a table, tag or file that must not exist yet
  | 'NotSupported' // a valid Paimon feature this store does not implement
  | 'Corruption' // a file's bytes do not decode, or contradict its metadata
  | 'Conflict' // another writer holds the table, or a commit lost a race it cannot retry
  | 'IOError'; // the filesystem failed

export class LsmError extends Error {
  readonly kind: LsmErrorKind;
  /** The file the error is about, when there is one. */
  readonly path: string | undefined;
  /**
   * Set on an error a TableWriter `write`/`writeRecord` threw, undefined on every other: false when
   * the write refused its row and left the writer as it was (a value that does not fit:
   * InvalidArgument; or a refusal of the failure's kind, "write refused, the row not taken"), true
   * when the row was taken and what ran after it failed (a flush on a full disk: the writer keeps
   * the row, and the next flush or commit writes it). DESIGN.md, write path, step 3.
   */
  rowTaken: boolean | undefined;

  constructor(kind: LsmErrorKind, message: string, options: { path?: string; cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = `LsmError(${kind})`;
    this.kind = kind;
    this.path = options.path;
    this.rowTaken = undefined;
  }
}

/**
 * Whether `e` is a TableWriter write's failure after it took its row (`rowTaken` true: a flush on a
 * full disk): the writer holds the row for the next flush or commit, so a caller counts it written.
 */
export function rowHeld(e: unknown): e is LsmError {
  return e instanceof LsmError && e.rowTaken === true;
}

export const invalidArgument = (message: string): LsmError => new LsmError('InvalidArgument', message);
export const notFound = (message: string): LsmError => new LsmError('NotFound', message);
export const notSupported = (message: string): LsmError => new LsmError('NotSupported', message);
export const corruption = (path: string, message: string, cause?: unknown): LsmError =>
  new LsmError('Corruption', `corruption in ${path}: ${message}`, { path, cause });

/**
 * Reads that met a stored value that does not cast to the column's type in the columns read
 * (Table.decodeRun: an older file read in a later schema), and whether the error names the
 * snapshot (or diff) the read was of yet (`nameReadState`).
 */
const uncastable = new WeakMap<LsmError, boolean>();

/** An InvalidArgument for a data file whose values do not cast to the columns it is read in (`cause`: the cast's error). */
export function uncastableRead(message: string, path: string, cause: unknown): LsmError {
  const e = new LsmError('InvalidArgument', message, { path, cause });
  uncastable.set(e, false);
  return e;
}

/** `e`, its message naming `what` was read (a snapshot, a tag, a diff) when it is an `uncastableRead` that names none yet. */
export function nameReadState(e: unknown, what: () => string): unknown {
  if (e instanceof LsmError && uncastable.get(e) === false) {
    uncastable.set(e, true);
    try {
      e.message += `, reading ${what()}`;
    } catch {
      // Naming the state is a courtesy of the error path: the error as it is.
    }
  }
  return e;
}

/** True when the error, or any error in its `cause` chain, is a corruption. */
export function isCorruption(err: unknown): boolean {
  for (let e = err; e instanceof Error; e = (e as Error & { cause?: unknown }).cause) {
    if (e instanceof LsmError && e.kind === 'Corruption') return true;
  }
  return false;
}

/** REQUIRES-style internal assertion: a failure is a bug in this code, never bad input. */
export function assert(condition: unknown, message: string): asserts condition {
  if (!condition) throw new Error(`assertion failed: ${message}`);
}

/**
 * JSON.parse's message on one line, with the line and column of the position it names (Node 20
 * gives only "at position 1251", and a site's config.json and contract files are edited by hand). An
 * "Unexpected token" message names no position; it quotes the text around it, newlines escaped.
 */
export function jsonErrorWhere(text: string, e: unknown): string {
  const message = (e as Error).message.replace(/\r?\n/g, '\\n');
  const m = /at position (\d+)/.exec(message);
  if (!m || /\(line \d+ column \d+\)/.test(message)) return message;
  const before = text.slice(0, Number(m[1]));
  const line = before.split('\n').length;
  const column = before.length - before.lastIndexOf('\n');
  return `${message} (line ${line}, column ${column})`;
}
