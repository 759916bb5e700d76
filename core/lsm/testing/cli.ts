// For tests: runs a CLI entry point (`(argv, io) => exit code`) in-process with captured output.
import { PassThrough, Readable } from 'node:stream';
import type { CliIO } from '../cli/output.ts';

export interface CliRun {
  code: number;
  out: string;
  err: string;
}

/** Runs `entry(args, io)` with `stdin` as standard input; the exit code and everything written. */
export async function runCli(entry: (argv: string[], io: CliIO) => Promise<number>, args: string[], stdin = ''): Promise<CliRun> {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = '';
  let err = '';
  stdout.on('data', (d) => (out += d));
  stderr.on('data', (d) => (err += d));
  const code = await entry(args, { stdin: Readable.from(stdin ? [Buffer.from(stdin)] : []), stdout, stderr });
  return { code, out, err };
}
