// The site's log: each line goes to the given sink (the terminal) and is appended to
// `<data>/logs/site.log`. Rotation by size: once the file would pass `fileBytesMax`, site.log.(N-1)
// is dropped, site.log.k becomes site.log.(k+1), site.log becomes site.log.1 — so at most
// `keepFiles` old files are kept (default 5 × 10 MiB) besides the current one.
// Logging never throws: a log file that cannot be written is reported once on the sink and tried
// again a minute after each failure; once it can be written, a line says since when it could not
// and how many lines only the sink got. (Left alone for good after one failure, a disk full for a
// moment kept the site's log empty for the rest of the run: the error ids the site names were not
// in it, and its last line was missing as after a crash.)

import { appendFileSync, existsSync, renameSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';

export type LogSink = (line: string) => void;

export interface LogOptions {
  /** Rotate when the current file would pass this size. Default 10 MiB. */
  fileBytesMax?: number;
  /** Old files kept (site.log.1 … site.log.<keepFiles>). Default 5. */
  keepFiles?: number;
  /** The clock of the lines' times and of the retries (tests). */
  now?: () => number;
}

/** How long after a failed write the log file is left alone before it is tried again. */
const RETRY_MS = 60_000;

export function siteLogger(logsDir: string, sink: LogSink, o: LogOptions | number = {}): LogSink {
  const opts = typeof o === 'number' ? { fileBytesMax: o } : o;
  const fileBytesMax = opts.fileBytesMax ?? 10 * 1024 * 1024;
  const keep = opts.keepFiles ?? 5;
  if (!Number.isSafeInteger(keep) || keep < 1) throw new Error(`keepFiles: expected an integer ≥ 1, got ${keep}`);
  const file = join(logsDir, 'site.log');
  const now = opts.now ?? Date.now;
  let bytes = sizeOf(file);
  /** Since when the file could not be written, the last failure, and the lines only the sink got. */
  let broken: { sinceMs: number; lastMs: number; lost: number } | undefined;
  const rotate = () => {
    rmSync(`${file}.${keep}`, { force: true });
    for (let k = keep - 1; k >= 1; k--) if (existsSync(`${file}.${k}`)) renameSync(`${file}.${k}`, `${file}.${k + 1}`);
    if (existsSync(file)) renameSync(file, `${file}.1`);
  };
  return (line: string) => {
    sink(line);
    const nowMs = now();
    // A clock set back since the failure tries again at once.
    if (broken && nowMs - broken.lastMs < RETRY_MS && nowMs >= broken.lastMs) {
      broken.lost++;
      return;
    }
    const stamp = new Date(nowMs).toISOString();
    const missed = broken ? `${stamp} (log file ${file} could not be written from ${new Date(broken.sinceMs).toISOString()}: ${broken.lost} line${broken.lost === 1 ? '' : 's'} went to the terminal only)\n` : '';
    const text = `${missed}${stamp} ${line}\n`;
    try {
      // What a failure left of the file (a rotation half done) is read again.
      if (broken) bytes = sizeOf(file);
      if (bytes > 0 && bytes + Buffer.byteLength(text) > fileBytesMax) {
        rotate();
        bytes = 0;
      }
      appendFileSync(file, text);
      bytes += Buffer.byteLength(text);
      broken = undefined;
    } catch (e) {
      if (!broken) sink(`(log file ${file} cannot be written: ${(e as Error).message}; logging to the terminal only, trying the file again every minute)`);
      broken = { sinceMs: broken?.sinceMs ?? nowMs, lastMs: nowMs, lost: (broken?.lost ?? 0) + 1 };
    }
  };
}

/** The file's size; 0 when it cannot be read (not there yet). */
function sizeOf(file: string): number {
  try {
    return statSync(file).size;
  } catch {
    return 0;
  }
}
