// The writer lock after a power cut and under racing takeovers (core/lsm/writer-lock.ts): a lock
// whose pid now belongs to an unrelated process (other boot, other start time) is stale; a
// really live holder still gives Conflict; two contenders taking over the same stale lock never
// both hold it; a takeover that died midway does not block the next one.

import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { LsmError } from './errors.ts';
import { processStartTicks, startTicksFromStat, WriterLock } from './writer-lock.ts';

const LOCK_MODULE = JSON.stringify(resolve(__dirname, 'writer-lock.ts'));
/** Above Linux's largest pid_max (2^22): no process has it. */
const DEAD_PID = 2 ** 22 + 12345;

const dirs: string[] = [];
const children: ChildProcess[] = [];
afterEach(() => {
  for (const c of children.splice(0)) if (c.exitCode === null) c.kill('SIGKILL');
});
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'writer-lock-'));
  dirs.push(d);
  return d;
}

function kindOf(f: () => unknown): string {
  try {
    f();
    return 'acquired';
  } catch (e) {
    return e instanceof LsmError ? `${e.kind}: ${e.message}` : String(e);
  }
}

/** Runs `body` (ESM, through tsx) in a child; resolves once it printed `ready`, with its output so far. */
async function child(body: string): Promise<{ proc: ChildProcess; out: () => string; exited: Promise<void> }> {
  const proc = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', body], { stdio: ['ignore', 'pipe', 'inherit'] });
  children.push(proc);
  let out = '';
  const exited = new Promise<void>((done) => proc.on('exit', () => done()));
  await new Promise<void>((ready, fail) => {
    const timer = setTimeout(() => fail(new Error(`child not ready after 20 s: ${out}`)), 20_000);
    proc.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      if (out.includes('ready')) {
        clearTimeout(timer);
        ready();
      }
    });
    proc.on('exit', () => fail(new Error(`child exited early: ${out}`)));
  });
  return { proc, out: () => out, exited };
}

/** A process that only sleeps, whose command (stat field 2) holds spaces and ')'. */
function sleeper(dir: string): ChildProcess {
  const exe = join(dir, 'a) b (c');
  symlinkSync('/bin/sleep', exe);
  const p = spawn(exe, ['60'], { stdio: 'ignore' });
  children.push(p);
  return p;
}

async function startTicksOf(pid: number): Promise<number> {
  // The child appears in /proc as soon as spawn returns; its stat may still name the parent's
  // image for a moment (before exec), but the start time is the fork's and does not change.
  for (let i = 0; i < 100; i++) {
    const t = processStartTicks(pid);
    if (typeof t === 'number') return t;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`no start time for pid ${pid}`);
}

const bootId = (): string => readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();

describe('the start time in /proc/<pid>/stat', () => {
  it('is field 22, counted from the last ")" since the command may hold spaces and ")"', () => {
    const rest = ['S', '1', '2', '3', '0', '-1', '4194560', '100', '0', '0', '0', '5', '6', '0', '0', '20', '0', '1', '0', '987654', '1234', '56'];
    expect(startTicksFromStat(`4242 (a) b (c) ${rest.join(' ')}\n`)).toBe(987654);
    expect(startTicksFromStat(`4242 (plain) ${rest.join(' ')}\n`)).toBe(987654);
    expect(startTicksFromStat('4242 (cut) S 1 2')).toBeUndefined();
    expect(startTicksFromStat('no parentheses')).toBeUndefined();
  });
});

describe.skipIf(process.platform !== 'linux')('a lock whose pid a later process has (power cut, reboot)', () => {
  it('is taken over when the boot id or the start time differ; a pid-only lock (older version) and a matching one still give Conflict', async () => {
    const dir = tempDir();
    const path = join(dir, '.writer.lock');
    const other = sleeper(dir);
    const pid = other.pid!;
    // Once it has exec'd, its stat line names the odd command: the parse below meets it for real.
    for (let i = 0; i < 200 && !readFileSync(`/proc/${pid}/stat`, 'utf8').includes('(a) b (c)'); i++) await new Promise((r) => setTimeout(r, 10));
    expect(readFileSync(`/proc/${pid}/stat`, 'utf8')).toContain(`${pid} (a) b (c) `);
    const start = await startTicksOf(pid);
    const record = (extra: object) => JSON.stringify({ pid, host: hostname(), token: 'dead-owner', sinceMs: 0, ...extra });

    // The recorded start time is not the one of the process that has the pid now.
    writeFileSync(path, record({ bootId: bootId(), startTicks: start + 1 }));
    let w = WriterLock.acquire(path, 'table t');
    expect(JSON.parse(readFileSync(path, 'utf8')).pid).toBe(process.pid);
    w.release();

    // Written in another boot: the pid is an unrelated process's.
    writeFileSync(path, record({ bootId: '00000000-0000-4000-8000-000000000000', startTicks: start }));
    w = WriterLock.acquire(path, 'table t');
    w.release();

    // Same boot and start time: it is that process's lock.
    writeFileSync(path, record({ bootId: bootId(), startTicks: start }));
    expect(kindOf(() => WriterLock.acquire(path, 'table t'))).toMatch(new RegExp(`^Conflict: table t is being written by process ${pid} `));

    // A lock without the fields keeps the pid check alone.
    writeFileSync(path, JSON.stringify({ pid, host: hostname(), token: 'old', sinceMs: 0 }));
    expect(kindOf(() => WriterLock.acquire(path, 'table t'))).toMatch(/^Conflict: table t is being written by process/);
    expect(existsSync(path)).toBe(true);
  }, 30_000);

  it('a lock a live child process took still gives Conflict, and records what identifies it', async () => {
    const dir = tempDir();
    const path = join(dir, '.writer.lock');
    const go = join(dir, 'go');
    const c = await child(`
      import fs from 'node:fs';
      const { WriterLock } = await import(${LOCK_MODULE});
      const w = WriterLock.acquire(${JSON.stringify(path)}, 'table t');
      console.log('ready');
      const cell = new Int32Array(new SharedArrayBuffer(4));
      for (let i = 0; i < 2000 && !fs.existsSync(${JSON.stringify(go)}); i++) Atomics.wait(cell, 0, 0, 10);
      w.release();
    `);
    const held = JSON.parse(readFileSync(path, 'utf8'));
    expect(held.pid).toBe(c.proc.pid);
    expect(held.bootId).toBe(bootId());
    expect(held.startTicks).toBe(await startTicksOf(c.proc.pid!));
    expect(kindOf(() => WriterLock.acquire(path, 'table t'))).toMatch(new RegExp(`^Conflict: table t is being written by process ${c.proc.pid} `));
    writeFileSync(go, '');
    await c.exited;
    WriterLock.acquire(path, 'table t').release();
  }, 30_000);
});

describe('taking over a stale lock', () => {
  it('two contenders: one that judged the stale lock, then slept while the other took it over, does not remove the other\'s lock', async () => {
    const dir = tempDir();
    const path = join(dir, '.writer.lock');
    const go = join(dir, 'go');
    writeFileSync(path, JSON.stringify({ pid: DEAD_PID, host: hostname(), token: 'stale-x', sinceMs: 0 }));
    // The child stops right after its first read of the lock (the stale holder it then judges)
    // until the parent has taken that holder over and linked its own lock.
    const c = await child(`
      import fs from 'node:fs';
      import { syncBuiltinESMExports } from 'node:module';
      const read = fs.readFileSync;
      let paused = false;
      fs.readFileSync = (p, ...rest) => {
        const r = read(p, ...rest);
        if (!paused && p === ${JSON.stringify(path)}) {
          paused = true;
          process.stdout.write('ready\\n');
          const cell = new Int32Array(new SharedArrayBuffer(4));
          for (let i = 0; i < 2000 && !fs.existsSync(${JSON.stringify(go)}); i++) Atomics.wait(cell, 0, 0, 10);
        }
        return r;
      };
      syncBuiltinESMExports();
      const { WriterLock } = await import(${LOCK_MODULE});
      try { WriterLock.acquire(${JSON.stringify(path)}, 'table t'); console.log('acquired'); } catch (e) { console.log(e.kind + ': ' + e.message); }
    `);
    const parent = WriterLock.acquire(path, 'table t');
    const mine = readFileSync(path, 'utf8');
    writeFileSync(go, '');
    await c.exited;
    const childGot = c.out().replace('ready', '').trim();
    expect(childGot).toMatch(new RegExp(`^Conflict: table t is being written by process ${process.pid} `));
    expect(readFileSync(path, 'utf8')).toBe(mine); // the parent's lock is where it was
    expect(readdirSync(dir).filter((n) => n.includes('takeover') || n.includes('stale'))).toEqual([]);
    parent.release();
    expect(existsSync(path)).toBe(false);
  }, 30_000);

  it('a takeover that died midway does not block the next; one in progress in a live process is not overtaken', async () => {
    const dir = tempDir();
    const path = join(dir, '.writer.lock');
    const stale = JSON.stringify({ pid: DEAD_PID, host: hostname(), token: 'stale-y', sinceMs: 0 });
    const claim = (n: number, pid: number, extra: object = {}) =>
      writeFileSync(`${path}.takeover-tstale-y.${n}`, JSON.stringify({ pid, host: hostname(), token: `c${n}`, sinceMs: 0, ...extra }));

    // Two claims left by contenders that died: the lock is taken over, and they are swept.
    writeFileSync(path, stale);
    claim(1, DEAD_PID);
    claim(2, DEAD_PID - 1);
    const w = WriterLock.acquire(path, 'table t');
    expect(JSON.parse(readFileSync(path, 'utf8')).pid).toBe(process.pid);
    expect(readdirSync(dir).filter((n) => n.includes('takeover'))).toEqual([]);
    w.release();

    // A live process holds the claim: it is removing the stale lock right now; not a second remover.
    writeFileSync(path, stale);
    const other = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60_000)'], { stdio: 'ignore' });
    children.push(other);
    const identity = process.platform === 'linux' ? { bootId: bootId(), startTicks: await startTicksOf(other.pid!) } : {};
    claim(1, DEAD_PID);
    claim(2, other.pid!, identity);
    expect(kindOf(() => WriterLock.acquire(path, 'table t'))).toBe(
      `Conflict: the stale writer lock of table t is being taken over by process ${other.pid}; try again`,
    );
    expect(readFileSync(path, 'utf8')).toBe(stale);
    other.kill('SIGKILL');
    await new Promise<void>((done) => (other.exitCode !== null ? done() : other.on('exit', () => done())));
    // Once it is gone, its claim is a dead one like the others.
    WriterLock.acquire(path, 'table t').release();
    expect(readdirSync(dir).filter((n) => n.includes('takeover'))).toEqual([]);
  }, 30_000);

  it('an empty lock, and one naming pid 0 (a process group for kill(2), never an owner), are stale', () => {
    const dir = tempDir();
    const path = join(dir, '.writer.lock');
    writeFileSync(path, '');
    WriterLock.acquire(path, 'table t').release();
    writeFileSync(path, JSON.stringify({ pid: 0, host: hostname(), token: 'zero', sinceMs: 0 }));
    WriterLock.acquire(path, 'table t').release();
    expect(readdirSync(dir)).toEqual([]);
  });
});
