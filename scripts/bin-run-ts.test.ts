// bin/run-ts.mjs, which runs the benchmarks and the TypeScript tools (`npm run bench`,
// `node bin/run-ts.mjs bench/replay.ts …`): an entry that is not there (a mistyped path) is named
// in one line, exit 2, not Node's ERR_MODULE_NOT_FOUND with tsx's loader stack under it.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';

const RUN_TS = join(import.meta.dirname, '..', 'bin', 'run-ts.mjs');
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
const scratch = (): string => {
  const d = mkdtempSync(join(tmpdir(), 'tilstand-run-ts-'));
  dirs.push(d);
  return d;
};
const run = (...args: string[]) => spawnSync(process.execPath, [RUN_TS, ...args], { encoding: 'utf8', timeout: 30_000 });

describe('bin/run-ts.mjs', () => {
  it('names an entry that does not exist, exit 2, without a stack trace', () => {
    const missing = join(scratch(), 'bench', 'nope.ts');
    const r = run(missing);
    expect(r.status).toBe(2);
    expect(r.stderr.trim()).toBe(`run-ts.mjs: ${missing} does not exist (usage: run-ts.mjs <file.ts> [args…])`);
    expect(r.stderr).not.toMatch(/^\s+at /m);
  });

  it('names a directory given as the entry', () => {
    const d = scratch();
    const r = run(d);
    expect(r.status).toBe(2);
    expect(r.stderr.trim()).toBe(`run-ts.mjs: ${d} is not a file (usage: run-ts.mjs <file.ts> [args…])`);
  });

  it('runs an entry that exists with its arguments, and leaves its own errors as they are', () => {
    const d = scratch();
    // .mts: the scratch folder has no package.json saying "type": "module" (tsx's ESM loader only).
    writeFileSync(join(d, 'ok.mts'), 'const n: number = process.argv.length; console.log(JSON.stringify(process.argv.slice(2)), n > 0);\n');
    const ok = run(join(d, 'ok.mts'), 'a', '--b');
    expect(ok.status).toBe(0);
    expect(ok.stdout.trim()).toBe('["a","--b"] true');
    // A missing import inside the entry is the entry's own failure: Node's error, as before.
    writeFileSync(join(d, 'bad.mts'), "import './missing.mts';\n");
    const bad = run(join(d, 'bad.mts'));
    expect(bad.status).toBe(1);
    expect(bad.stderr).toContain('ERR_MODULE_NOT_FOUND');
  });
});
