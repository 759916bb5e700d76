// `tilstand table scan … | less` (or `tilstand hq scan …`), then q: the reader stops reading
// while the command's last write is still pending in the OS, and closes the pipe after the
// command has returned. That write's
// EPIPE comes after LineWriter.end(); it used to find no 'error' listener and end the process
// with exit 1 and a stack trace. A real child process on a real pipe (a FIFO, so this test holds
// the only read end and never reads): Linux only, as it watches the child's epoll set in /proc.
import { execFileSync, spawn } from 'node:child_process';
import { closeSync, constants, mkdtempSync, openSync, readdirSync, readFileSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../testing/cli.ts';
import { runTableCli } from './table-cli.ts';

const REPO = resolve(import.meta.dirname, '../../..');
const dir = mkdtempSync(join(tmpdir(), 'tilstand-cli-epipe-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const table = (...args: string[]) => runCli(runTableCli, args);
const stdinTable = (input: string, ...args: string[]) => runCli(runTableCli, args, input);

/** How many bytes a new pipe holds before a write would block (65536 on a usual Linux). */
function pipeCapacity(path: string): number {
  execFileSync('mkfifo', [path]);
  const r = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  const w = openSync(path, constants.O_WRONLY | constants.O_NONBLOCK);
  try {
    let n = 0;
    for (let i = 0; i < 4096; i++) {
      try {
        n += writeSync(w, Buffer.alloc(4096));
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code === 'EAGAIN') return n;
        throw e;
      }
    }
    return n;
  } finally {
    closeSync(w);
    closeSync(r);
    rmSync(path);
  }
}

/** Whether process `pid` waits to write to its fd 1 (fd 1 in one of its epoll sets with EPOLLOUT). */
function waitsToWriteStdout(pid: number): boolean {
  let fds: string[];
  try {
    fds = readdirSync(`/proc/${pid}/fdinfo`);
  } catch {
    return false; // gone
  }
  for (const fd of fds) {
    let info: string;
    try {
      info = readFileSync(`/proc/${pid}/fdinfo/${fd}`, 'utf8');
    } catch {
      continue;
    }
    const m = /^tfd:\s+1\s+events:\s+([0-9a-f]+)/m.exec(info);
    if (m && (parseInt(m[1]!, 16) & 0x4) !== 0) return true;
  }
  return false;
}

// The table is made where it is both a warehouse and a directory HQ (`site_7.db/kv`).
const warehouse = join(dir, 'warehouse');
let rows = 0;

beforeAll(async () => {
  const capacity = pipeCapacity(join(dir, 'probe.fifo'));
  // LineWriter writes 64 KiB chunks; each must fit whole into the pipe (a write that does not
  // is waited for, and its failure was always handled) so that only the last, small one waits.
  if (capacity < 65536 || capacity % 65536 !== 0) {
    console.warn(`\n*** NOTICE: a pipe here holds ${capacity} bytes, not a multiple of 64 KiB: SKIPPING the pending-last-write EPIPE tests ***\n`);
    return;
  }
  const W = ['--warehouse', warehouse];
  const schema = join(dir, 'kv.json');
  writeFileSync(schema, JSON.stringify({ fields: [{ name: 'k', type: 'STRING' }, { name: 'v', type: 'STRING' }], primaryKeys: ['k'], options: { bucket: '1' } }));
  expect((await table('create', 'site_7.kv', '--schema', schema, ...W)).code).toBe(0);
  // Lines of exactly 1024 bytes, `{"k":"k0000","v":"xxx…"}\n`: 64 of them are one chunk, and
  // the pipe takes capacity/64 KiB chunks whole; one more line is the last write, left pending.
  const n = (capacity / 65536) * 64 + 1;
  const input = Array.from({ length: n }, (_, i) => JSON.stringify({ k: `k${String(i).padStart(4, '0')}`, v: 'x'.repeat(1003) })).join('\n');
  expect((await stdinTable(input, 'put', 'site_7.kv', ...W)).out).toBe(`{"snapshot":1,"rows":${n}}\n`);
  rows = n;
});

/** Runs `tilstand <args>` with stdout into a FIFO nobody reads; closes it once the child waits to write. */
async function readerGoesAway(args: string[]): Promise<[number | null, NodeJS.Signals | null, string]> {
  const fifo = join(dir, `out-${args[0]}.fifo`);
  execFileSync('mkfifo', [fifo]);
  const readEnd = openSync(fifo, constants.O_RDONLY | constants.O_NONBLOCK);
  const writeEnd = openSync(fifo, constants.O_WRONLY);
  const child = spawn(process.execPath, [join(REPO, 'bin', 'tilstand.mjs'), ...args], { stdio: ['ignore', writeEnd, 'pipe'] });
  closeSync(writeEnd);
  let err = '';
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  const closed = new Promise<[number | null, NodeJS.Signals | null]>((done) => child.on('close', (c, sig) => done([c, sig])));
  let readerOpen = true;
  try {
    // Wait (at most 60 s, polled every 20 ms) until the child has returned to its event loop
    // with the last chunk still unwritten: then the scan is over and LineWriter.end() has run.
    const start = Date.now();
    let pending = false;
    for (let i = 0; i < 3000 && Date.now() - start < 60_000; i++) {
      if (child.exitCode !== null) break;
      if ((pending = waitsToWriteStdout(child.pid!))) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(pending, `the child never waited on its stdout (exit ${child.exitCode}; stderr: ${err})`).toBe(true);
    closeSync(readEnd); // the reader goes away: the pending write fails with EPIPE
    readerOpen = false;
    const [code, signal] = await closed;
    return [code, signal, err];
  } finally {
    if (readerOpen) closeSync(readEnd);
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  }
}

describe('a scan into a pipe whose reader stops, then goes away after the command returned', () => {
  it.skipIf(process.platform !== 'linux')('tilstand table scan exits 0 with nothing on stderr', async () => {
    if (rows === 0) return; // skipped above, with a notice
    // Was exit 1 with "Unhandled 'error' event … write EPIPE" on stderr.
    expect(await readerGoesAway(['table', 'scan', 'site_7.kv', '--warehouse', warehouse])).toEqual([0, null, '']);
  }, 120_000);

  it.skipIf(process.platform !== 'linux')('tilstand hq scan exits 0 with nothing on stderr', async () => {
    if (rows === 0) return;
    // hq scan's jsonl lines are the same 1024 bytes. Was exit 1, as above.
    expect(await readerGoesAway(['hq', 'scan', '--hq', warehouse, '--site', '7', '--table', 'kv'])).toEqual([0, null, '']);
  }, 120_000);
});
