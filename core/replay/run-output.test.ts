// `replay run`'s output folder appears whole or not at all (run-output.ts). Its files were written
// one by one into --out: a run killed (or failing) while it wrote them left a half-written file, or
// run.json without proposals.json, which `replay diff` then read as a run, and which made --out a
// folder a retry refuses as not empty. A temporary folder a killed run leaves beside --out is
// removed by the next run to that --out, never one of a live run.
import { spawn } from 'node:child_process';
import { existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { writeRunOutput } from './run-output.ts';

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

  it("removes a killed run's temporary folder, not a live run's", async () => {
    const parent = mkdtempSync(join(dir, 'stale-'));
    const out = join(parent, 'run-c');
    const dead = `.run-c.${await deadPid()}.tmp`;
    const live = `.run-c.${process.ppid}.tmp`;
    for (const n of [dead, live]) {
      mkdirSync(join(parent, n));
      writeFileSync(join(parent, n, 'run.json'), '{');
    }
    writeRunOutput(out, { 'run.json': { format: 1 } });
    expect(readdirSync(parent).sort()).toEqual([live, 'run-c']);
  });

  it.skipIf(process.platform === 'win32')('is written into the empty folder an --out link names, and the link stays', () => {
    // A link to an empty folder was a good --out (the CLI checks it and writes into it); removing
    // it to rename the run into place failed with ENOTDIR once the whole replay had run.
    const parent = mkdtempSync(join(dir, 'link-'));
    const target = join(parent, 'disk', 'run-d');
    mkdirSync(target, { recursive: true });
    const out = join(parent, 'latest');
    symlinkSync(target, out, 'dir');
    writeRunOutput(out, { 'run.json': { format: 1 } });
    expect(lstatSync(out).isSymbolicLink()).toBe(true);
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
    } finally {
      process.chdir(cwd);
    }
    expect(readdirSync(out)).toEqual(['run.json']);
  });
});
