// vitest.config.ts's `shared` project lets files that spy (vi.spyOn) share a worker process
// (test/helpers/test-isolation.ts) because vitest puts a file's spies back when the file ends, in
// a shared worker too. This holds vitest to it: two files, one after another in one process
// (isolate: false, one worker), each first checks that Math.random and process.stderr.write are
// the real ones and then leaves a spy on each. If vitest stopped putting them back, the second
// file would fail here, and spying files would have to go back to a process of their own.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../..');
const dir = mkdtempSync(join(tmpdir(), 'tilstand-shared-spies-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const leavesSpies = `
it('meets the real functions and leaves a spy on each', () => {
  console.info('worker pid', process.pid);
  expect(vi.isMockFunction(Math.random)).toBe(false);
  expect(vi.isMockFunction(process.stderr.write)).toBe(false);
  vi.spyOn(Math, 'random').mockReturnValue(0.5);
  vi.spyOn(process.stderr, 'write');
});
`;

describe('a shared worker (isolate: false)', () => {
  it('gives the second file the real functions the first file spied on', () => {
    writeFileSync(join(dir, 'a.test.js'), leavesSpies);
    writeFileSync(join(dir, 'b.test.js'), leavesSpies);
    const config = { test: { globals: true, isolate: false, pool: 'forks', maxWorkers: 1, fileParallelism: false, include: ['*.test.js'] } };
    writeFileSync(join(dir, 'vitest.config.mjs'), `export default ${JSON.stringify(config)};`);
    const r = spawnSync(process.execPath, [join(ROOT, 'node_modules/vitest/vitest.mjs'), 'run', '--root', dir, '--config', join(dir, 'vitest.config.mjs')], { encoding: 'utf8', timeout: 60_000, env: { ...process.env, NO_COLOR: '1', FORCE_COLOR: '0' } });
    const out = r.stdout + r.stderr;
    expect(r.status, out).toBe(0);
    expect(out).toMatch(/Tests\s+2 passed/);
    const pids = new Set([...out.matchAll(/worker pid (\d+)/g)].map((m) => m[1]));
    expect(pids.size, 'both files ran in one process').toBe(1);
  });
});
