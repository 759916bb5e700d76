// `replay run`'s output folder appears whole or not at all (run-output.ts). Its files were written
// one by one into --out: a run killed (or failing) while it wrote them left a half-written file, or
// run.json without proposals.json, which `replay diff` then read as a run, and which made --out a
// folder a retry refuses as not empty. A temporary folder a killed run leaves beside --out is
// removed by the next run to that --out, never one of a live run nor one of another host. An --out
// that exists (empty) is written into, not replaced: the folder, its inode and mode stay.
import { execFileSync, spawn } from 'node:child_process';
import { chmodSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { halfMoved, writeRunOutput } from './run-output.ts';

/** This host as a temporary folder's name carries it (run-output.ts). */
const HOST = hostname().replace(/[^A-Za-z0-9-]/g, '-').slice(0, 64);

const dir = mkdtempSync(join(tmpdir(), 'tilstand-run-output-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A value whose serialisation fails midway, as a write that fails (a full disk) or a kill would stop it. */
const failing = {
  get rows(): unknown {
    throw new Error('disk full');
  },
};

/** The pid of a process that has exited. */
async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ['-e', '0'], { stdio: 'ignore' });
  await new Promise<void>((done) => child.on('exit', () => done()));
  return child.pid!;
}

describe('the run folder', () => {
  it('is not there at all when writing it fails after its first file; nothing is left beside it', () => {
    const parent = mkdtempSync(join(dir, 'fail-'));
    const out = join(parent, 'run-a');
    expect(() => writeRunOutput(out, { 'run.json': { format: 1 }, 'proposals.json': failing })).toThrow('disk full');
    expect(existsSync(out)).toBe(false);
    expect(readdirSync(parent)).toEqual([]);
  });

  it('is written whole into an empty --out', () => {
    const out = join(mkdtempSync(join(dir, 'empty-')), 'run-b');
    mkdirSync(out);
    writeRunOutput(out, { 'run.json': { format: 1 }, 'proposals.json': [] });
    expect(readdirSync(out).sort()).toEqual(['proposals.json', 'run.json']);
    expect(readFileSync(join(out, 'run.json'), 'utf8')).toBe('{\n  "format": 1\n}\n');
  });

  it("removes a killed run's temporary folder of this host, not a live run's nor another host's", async () => {
    const parent = mkdtempSync(join(dir, 'stale-'));
    const out = join(parent, 'run-c');
    const pid = await deadPid();
    const dead = `.run-c.${pid}@${HOST}.tmp`;
    const live = `.run-c.${process.ppid}@${HOST}.tmp`;
    // The same dead pid on another host sharing the folder means nothing here: its run may live.
    const otherHost = `.run-c.${pid}@another-host.tmp`;
    // An older version's name has no host: whose it is cannot be told.
    const older = `.run-c.${pid}.tmp`;
    for (const n of [dead, live, otherHost, older]) {
      mkdirSync(join(parent, n));
      writeFileSync(join(parent, n, 'run.json'), '{');
    }
    writeRunOutput(out, { 'run.json': { format: 1 } });
    expect(readdirSync(parent).sort()).toEqual([live, older, otherHost, 'run-c'].sort());
  });

  it("removes a killed run's temporary folder inside an empty --out", async () => {
    const out = join(mkdtempSync(join(dir, 'stale-inside-')), 'run-g');
    mkdirSync(out);
    const dead = `.tilstand-run.${await deadPid()}@${HOST}.tmp`;
    mkdirSync(join(out, dead));
    writeFileSync(join(out, dead, 'run.json'), '{');
    writeRunOutput(out, { 'run.json': { format: 1 } });
    expect(readdirSync(out)).toEqual(['run.json']);
  });

  it('is written for an --out whose name has 250 bytes: the temporary name is cut, with a hash', () => {
    // `.<name>.<pid>.tmp` passed 255 bytes (NAME_MAX): ENAMETOOLONG once the whole replay had run.
    const parent = mkdtempSync(join(dir, 'long-'));
    for (const name of ['r'.repeat(250), `${'å'.repeat(120)}-${'x'.repeat(8)}`]) {
      const out = join(parent, name);
      writeRunOutput(out, { 'run.json': { format: 1 } });
      expect(readdirSync(out)).toEqual(['run.json']);
    }
    expect(readdirSync(parent)).toHaveLength(2);
  });

  it.skipIf(process.platform === 'win32')('is written into an empty --out that exists, which keeps its inode and mode', () => {
    // It was removed and the run renamed onto its path: a new folder with the default mode.
    const out = join(mkdtempSync(join(dir, 'kept-')), 'run-h');
    mkdirSync(out);
    chmodSync(out, 0o710);
    const before = statSync(out);
    writeRunOutput(out, { 'run.json': { format: 1 }, 'proposals.json': [] });
    const after = statSync(out);
    expect([after.ino, after.mode & 0o7777]).toEqual([before.ino, 0o710]);
    expect(readdirSync(out).sort()).toEqual(['proposals.json', 'run.json']);
  });

  it('leaves an empty --out that exists empty when writing into it fails', () => {
    const out = join(mkdtempSync(join(dir, 'kept-fail-')), 'run-i');
    mkdirSync(out);
    const ino = statSync(out).ino;
    expect(() => writeRunOutput(out, { 'run.json': { format: 1 }, 'proposals.json': failing })).toThrow('disk full');
    expect(readdirSync(out)).toEqual([]);
    expect(statSync(out).ino).toBe(ino);
  });

  it('tells the files a run left while it moved them in (no run.json) from other files', () => {
    const runFiles = ['run.json', 'proposals.json', 'decisions.json'];
    expect(halfMoved(['decisions.json', 'proposals.json'], runFiles)).toMatch(/no run\.json/);
    expect(halfMoved(['decisions.json', 'run.json'], runFiles)).toBeUndefined();
    expect(halfMoved(['decisions.json', 'notes.txt'], runFiles)).toBeUndefined();
    expect(halfMoved([], runFiles)).toBeUndefined();
  });

  it.skipIf(process.platform === 'win32')('is written into the empty folder an --out link names, and the link stays', () => {
    // A link to an empty folder was a good --out (the CLI checks it and writes into it); removing
    // it to rename the run into place failed with ENOTDIR once the whole replay had run.
    const parent = mkdtempSync(join(dir, 'link-'));
    const target = join(parent, 'disk', 'run-d');
    mkdirSync(target, { recursive: true });
    const out = join(parent, 'latest');
    symlinkSync(target, out, 'dir');
    const ino = statSync(target).ino;
    writeRunOutput(out, { 'run.json': { format: 1 } });
    expect(lstatSync(out).isSymbolicLink()).toBe(true);
    expect(statSync(target).ino).toBe(ino);
    expect(readdirSync(target)).toEqual(['run.json']);
    expect(readdirSync(parent).sort()).toEqual(['disk', 'latest']);
    expect(readdirSync(join(parent, 'disk'))).toEqual(['run-d']);
  });

  it.skipIf(process.platform === 'win32')("is written into an empty --out given as '.'", () => {
    // `--out .` in an empty folder: '.' has no name to be renamed to beside it (rmdir '.' failed
    // with EINVAL once the whole replay had run).
    const out = join(mkdtempSync(join(dir, 'dot-')), 'run-e');
    mkdirSync(out);
    const cwd = process.cwd();
    process.chdir(out);
    try {
      writeRunOutput('.', { 'run.json': { format: 1 } });
      // The shell's folder is the run's: it was replaced by a new one, the shell left in a removed one.
      expect(readdirSync('.')).toEqual(['run.json']);
    } finally {
      process.chdir(cwd);
    }
    expect(readdirSync(out)).toEqual(['run.json']);
  });

  // Mounting needs root (and the right to mount: a container may refuse it).
  const canMount = (() => {
    if (process.platform !== 'linux' || process.getuid?.() !== 0) return false;
    const probe = mkdtempSync(join(dir, 'mount-probe-'));
    try {
      execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'tilstand-test', probe], { stdio: 'ignore' });
      execFileSync('umount', [probe], { stdio: 'ignore' });
      return true;
    } catch {
      return false;
    }
  })();

  it.skipIf(!canMount)('is written into an empty --out that is a mount point, which stays mounted', () => {
    // Removing it failed with EBUSY once the whole replay had run; a temporary folder beside it
    // is on another file system, so nothing is renamed across.
    const out = join(mkdtempSync(join(dir, 'mount-')), 'run-f');
    mkdirSync(out);
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=1m,mode=0750', 'tilstand-test', out]);
    try {
      writeRunOutput(out, { 'run.json': { format: 1 }, 'proposals.json': [] });
      expect(readdirSync(out).sort()).toEqual(['proposals.json', 'run.json']);
      expect(statSync(out).mode & 0o7777).toBe(0o750);
    } finally {
      execFileSync('umount', [out]);
    }
  });
});
