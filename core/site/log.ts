// The site's log: each line goes to the given sink (the terminal) and is appended to
// `<data>/logs/site.log`, which is rotated to site.log.1 once it passes `fileBytesMax`.
// Logging never throws: a failing log file is reported once on the sink and then left alone.

import { appendFileSync, renameSync, statSync } from 'node:fs';
import { join } from 'node:path';

export type LogSink = (line: string) => void;

export function siteLogger(logsDir: string, sink: LogSink, fileBytesMax = 10 * 1024 * 1024): LogSink {
  const file = join(logsDir, 'site.log');
  let bytes = 0;
  try {
    bytes = statSync(file).size;
  } catch {
    bytes = 0;
  }
  let broken = false;
  return (line: string) => {
    sink(line);
    if (broken) return;
    const text = `${new Date().toISOString()} ${line}\n`;
    try {
      if (bytes + text.length > fileBytesMax) {
        renameSync(file, `${file}.1`);
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
