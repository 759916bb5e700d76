// Output of the command line: the injectable streams, a line writer that respects backpressure
// (a large scan never buffers more than one chunk, and waits for 'drain' when the consumer is
// slower than the table), and the aligned human tables.
//
// A consumer that goes away (`tilstand table scan … | head -1` → EPIPE) ends the output quietly:
// `OutputClosed` is thrown to unwind the command, which then exits 0. Any other write failure
// (`… > out.jsonl` on a full disk: ENOSPC, EIO) is an error, exit 5: a truncated file must not
// look like a finished one.

import { CliError, EXIT } from './args.ts';

/** The streams a command uses; `main` gets the process's, tests pass their own. */
export interface CliIO {
  stdin: NodeJS.ReadableStream;
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
}

/** Thrown by LineWriter when the stream it writes to is closed or broken. */
export class OutputClosed extends Error {
  constructor(cause: unknown) {
    super('output closed', { cause });
    this.name = 'OutputClosed';
  }
}

/** Codes of a reader that went away: the output ends quietly. */
const READER_GONE = new Set(['EPIPE', 'ECONNRESET', 'ERR_STREAM_DESTROYED', 'ERR_STREAM_PREMATURE_CLOSE']);

/**
 * The error a failed write unwinds the command with: OutputClosed (exit 0) when the reader went
 * away, else a CliError(5) naming the failure.
 */
function writeFailure(cause: unknown): Error {
  const code = (cause as NodeJS.ErrnoException | undefined)?.code;
  if (code === undefined || READER_GONE.has(code)) return new OutputClosed(cause);
  return new CliError(EXIT.io, `cannot write the output: ${(cause as Error).message ?? String(cause)}`);
}

/** Bytes gathered before one write to the stream. */
const CHUNK_CHARS = 64 * 1024;

export class LineWriter {
  private parts: string[] = [];
  private chars = 0;
  private failure: unknown;
  private readonly onError = (e: unknown) => {
    this.failure ??= e;
  };

  constructor(private readonly out: NodeJS.WritableStream) {
    out.on('error', this.onError);
  }

  /** Queues one line (a newline is added); writes when a chunk is full. */
  async line(text: string): Promise<void> {
    this.parts.push(text, '\n');
    this.chars += text.length + 1;
    if (this.chars >= CHUNK_CHARS) await this.flush();
  }

  async lines(texts: readonly string[]): Promise<void> {
    for (const t of texts) await this.line(t);
  }

  /** Writes what is queued and waits for 'drain' when the stream asks for it. */
  async flush(): Promise<void> {
    if (this.failure !== undefined) throw writeFailure(this.failure);
    if (this.chars === 0) return;
    const text = this.parts.join('');
    this.parts = [];
    this.chars = 0;
    let ok: boolean;
    try {
      ok = this.out.write(text);
    } catch (e) {
      throw writeFailure(e);
    }
    if (!ok) await this.drain();
    if (this.failure !== undefined) throw writeFailure(this.failure);
  }

  private drain(): Promise<void> {
    return new Promise((resolve, reject) => {
      const done = (err?: unknown) => {
        this.out.off('drain', onDrain);
        this.out.off('error', onFail);
        this.out.off('close', onClose);
        if (err === undefined) resolve();
        else reject(writeFailure(err));
      };
      const onDrain = () => done();
      const onFail = (e: unknown) => done(e ?? new Error('stream error'));
      const onClose = () => done(new Error('stream closed'));
      this.out.on('drain', onDrain);
      this.out.on('error', onFail);
      this.out.on('close', onClose);
    });
  }

  /**
   * Flushes and hands the stream to the shared quiet listener. The last write may still be
   * pending in the OS (a pipe whose reader has stopped reading: `… | less`, then q) and fail after
   * the command has returned; with no listener that EPIPE would be an unhandled 'error' that ends
   * the process with exit 1 and a stack trace.
   */
  async end(): Promise<void> {
    try {
      await this.flush();
    } finally {
      this.out.off('error', this.onError);
      keepQuiet(this.out);
    }
  }
}

/** Streams that already carry `ignoreLateError` (one listener per stream, however many writers). */
const quietStreams = new WeakSet<NodeJS.WritableStream>();

/**
 * A failure of a write nobody waits for any more: the command's exit code is already decided
 * (the reader went away, or the output was complete when the command ended).
 */
function ignoreLateError(): void {}

function keepQuiet(out: NodeJS.WritableStream): void {
  if (quietStreams.has(out)) return;
  quietStreams.add(out);
  out.on('error', ignoreLateError);
}

/**
 * Aligned columns: a header line and one line per row, two spaces apart; columns listed in
 * `right` are right-aligned (numbers). Trailing spaces are trimmed.
 */
export function formatTable(headers: readonly string[], rows: readonly (readonly string[])[], right: ReadonlySet<number> = new Set()): string[] {
  const widths = headers.map((h, c) => Math.max(h.length, ...rows.map((r) => (r[c] ?? '').length)));
  const fmt = (cells: readonly string[]) =>
    cells
      .map((v, c) => (right.has(c) ? v.padStart(widths[c]!) : v.padEnd(widths[c]!)))
      .join('  ')
      .trimEnd();
  return [fmt(headers), ...rows.map(fmt)];
}

/** 1536 → `1.5 KiB`. */
export function formatBytes(n: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let v = n;
  let u = 0;
  while (v >= 1024 && u < units.length - 1) {
    v /= 1024;
    u++;
  }
  return u === 0 ? `${n} B` : `${v.toFixed(1)} ${units[u]}`;
}

/** 90061000 → `1d1h1m1s`; 0 → `0s`. */
export function formatDuration(ms: number): string {
  const parts: string[] = [];
  let rest = ms;
  for (const [unit, size] of [['d', 86_400_000], ['h', 3_600_000], ['m', 60_000], ['s', 1000]] as const) {
    const n = Math.floor(rest / size);
    if (n > 0) parts.push(`${n}${unit}`);
    rest -= n * size;
  }
  if (rest > 0) parts.push(`${rest}ms`);
  return parts.length === 0 ? '0s' : parts.join('');
}
