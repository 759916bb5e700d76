// The site's log: each line goes to the given sink (the terminal) and is appended to
// `<data>/logs/site.log`. Rotation by size: once the file would pass `fileBytesMax`, site.log.(N-1)
// is dropped, site.log.k becomes site.log.(k+1), site.log becomes site.log.1 — so at most
// `keepFiles` old files are kept (default 5 × 10 MiB) besides the current one.
// Logging never throws: a failing log file is reported once on the sink and then left alone.

import { appendFileSync, existsSync, renameSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';

export type LogSink = (line: string) => void;

export interface LogOptions {
  /** Rotate when the current file would pass this size. Default 10 MiB. */
  fileBytesMax?: number;
  /** Old files kept (site.log.1 … site.log.<keepFiles>). Default 5. */
  keepFiles?: number;
}

export function siteLogger(logsDir: string, sink: LogSink, o: LogOptions | number = {}): LogSink {
  const opts = typeof o === 'number' ? { fileBytesMax: o } : o;
  const fileBytesMax = opts.fileBytesMax ?? 10 * 1024 * 1024;
  const keep = opts.keepFiles ?? 5;
  if (!Number.isSafeInteger(keep) || keep < 1) throw new Error(`keepFiles: expected an integer ≥ 1, got ${keep}`);
  const file = join(logsDir, 'site.log');
  let bytes = 0;
  try {
    bytes = statSync(file).size;
  } catch {
    bytes = 0;
  }
  let broken = false;
  const rotate = () => {
    rmSync(`${file}.${keep}`, { force: true });
    for (let k = keep - 1; k >= 1; k--) if (existsSync(`${file}.${k}`)) renameSync(`${file}.${k}`, `${file}.${k + 1}`);
    if (existsSync(file)) renameSync(file, `${file}.1`);
  };
  return (line: string) => {
    sink(line);
    if (broken) return;
    const text = `${new Date().toISOString()} ${line}\n`;
    try {
      if (bytes > 0 && bytes + Buffer.byteLength(text) > fileBytesMax) {
        rotate();
        bytes = 0;
      }
      appendFileSync(file, text);
      bytes += Buffer.byteLength(text);
    } catch (e) {
      broken = true;
      sink(`(log file ${file} cannot be written: ${(e as Error).message}; logging to the terminal only)`);
    }
  };
}
