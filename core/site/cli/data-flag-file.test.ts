// `--data` naming a file (or a path under one) is refused as the bad option it is, exit 2, before
// anything is made or started: `init` and `start --demo` printed Node's "EEXIST: file already
// exists, mkdir …" (or ENOTDIR) with exit 5, naming no option, and a plain `start` took the file
// for "a new data directory" and served the first-run screen, whose setup could only fail.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runMain } from './test-support.ts';

const dir = mkdtempSync(join(tmpdir(), 'tilstand-data-flag-file-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const file = join(dir, 'notes.txt');
writeFileSync(file, 'not a data directory\n');

/** `tilstand <args>`; one still running after 10 s (a site started) is stopped as Ctrl-C stops it. */
async function bounded(args: string[]): Promise<{ code: number; out: string; err: string; stopped: boolean }> {
  const run = runMain(args);
  let timer: NodeJS.Timeout | undefined;
  const late = await Promise.race([run.then(() => false), new Promise<boolean>((r) => (timer = setTimeout(() => r(true), 10_000)))]);
  clearTimeout(timer);
  if (late) process.emit('SIGINT', 'SIGINT');
  return { ...(await run), stopped: late };
}

describe('--data naming a file', () => {
  it('init, start, start --demo and demo refuse it naming --data, exit 2; the file is left as it was', async () => {
    const cases: [string[], string][] = [
      [['init', '--data', file, '--site', 'north'], file],
      [['init', '--data', join(file, 'site'), '--site', 'north'], file],
      [['start', '--data', file, '--headless', '--mqtt-port', '0', '--http-port', '0'], file],
      [['start', '--data', join(file, 'site'), '--headless', '--mqtt-port', '0', '--http-port', '0'], file],
      [['start', '--data', file, '--demo', '--headless', '--mqtt-port', '0', '--http-port', '0'], file],
      [['demo', '--data', file, '--mqtt-url', 'mqtt://127.0.0.1:1'], file],
      [['status', '--data', file], file],
    ];
    for (const [args, blocked] of cases) {
      const r = await bounded(args);
      const what = args.join(' ');
      expect.soft(r.stopped, `${what}: still running after 10 s`).toBe(false);
      expect.soft([r.code, r.out, r.err], what).toEqual([2, '', `tilstand: option '--data': ${blocked} is a file, not a directory\n`]);
    }
    expect(readFileSync(file, 'utf8')).toBe('not a data directory\n');
  }, 120_000);
});
