// For tests: runs the `tilstand` dispatcher in-process with captured output.
import { PassThrough, Readable } from 'node:stream';
import { main } from './main.ts';

export interface MainResult {
  code: number;
  out: string;
  err: string;
}

/** `tilstand <args>` in this process: the exit code and everything written to stdout and stderr. */
export async function runMain(args: string[], stdin = ''): Promise<MainResult> {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = '';
  let err = '';
  stdout.on('data', (d) => (out += d));
  stderr.on('data', (d) => (err += d));
  const code = await main(args, { stdin: Readable.from(stdin ? [Buffer.from(stdin)] : []), stdout, stderr });
  return { code, out, err };
}
