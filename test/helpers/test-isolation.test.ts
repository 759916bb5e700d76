// Which test files share a worker (vitest.config.ts's projects): a file that changes the process
// gets its own; every test file of the suite is in exactly one of the two lists.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { isSuiteTestFile, needsOwnProcess, splitTestFiles } from './test-isolation.ts';

const root = mkdtempSync(join(tmpdir(), 'tilstand-test-isolation-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const write = (path: string, text: string) => {
  mkdirSync(dirname(join(root, path)), { recursive: true });
  writeFileSync(join(root, path), text);
};

describe('needsOwnProcess', () => {
  it('shares a file that only imports, reads and writes its own temporary files', () => {
    expect(needsOwnProcess("import { it } from 'vitest';\nconst home = process.env.HOME;\nif (process.env.CI === 'true') {}\n")).toBe(false);
  });

  it('shares a file with a spy (vitest puts spies back when a file ends)', () => {
    expect(needsOwnProcess("const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});")).toBe(false);
  });

  it.each([
    ['a module mock', "vi.mock('node:fs', () => ({}));"],
    ['fake timers', 'vi.useFakeTimers();'],
    ['a stubbed environment variable', "vi.stubEnv('TZ', 'UTC');"],
    ['an environment variable written', "process.env.TILSTAND_X = '1';"],
    ['an environment variable written by index', "process.env['TZ'] = 'UTC';"],
    ['an environment variable deleted', 'delete process.env.TZ;'],
    ['environment variables assigned', 'Object.assign(process.env, { TZ: "UTC" });'],
    ['a process listener', "process.on('SIGTERM', stop);"],
    ['the working directory', 'process.chdir(dir);'],
    ['the umask', 'process.umask(0o077);'],
    ['a global', 'globalThis.fetch = fake;'],
    ['node:fs patched', "import { spyFsync } from '../testing/fsync-spy.ts';"],
    ['node:fs faults', "import { withFsFault } from './testing/fs-faults.ts';"],
    ['the marker', '// vitest: own process (holds a lock the next file would meet)'],
  ])('gives a process of its own to a file with %s', (_what, text) => {
    expect(needsOwnProcess(text)).toBe(true);
  });

});

describe('isSuiteTestFile', () => {
  it('takes the suite folders’ test files, not the long reliability files, node_modules or other folders', () => {
    expect(isSuiteTestFile('core/lsm/table.test.ts')).toBe(true);
    expect(isSuiteTestFile('renderer/src/App.test.ts')).toBe(true);
    expect(isSuiteTestFile('renderer/src/App.test.tsx')).toBe(false); // as the include was: *.test.ts
    expect(isSuiteTestFile('test/reliability/soak.test.ts')).toBe(true);
    expect(isSuiteTestFile('test/reliability/soak.long.test.ts')).toBe(false);
    expect(isSuiteTestFile('core/node_modules/x/a.test.ts')).toBe(false);
    expect(isSuiteTestFile('dist/a.test.ts')).toBe(false);
    expect(isSuiteTestFile('core/lsm/table.ts')).toBe(false);
  });
});

describe('splitTestFiles', () => {
  it('puts every test file under the roots in one list, by its text', () => {
    write('core/a.test.ts', "import { it } from 'vitest';");
    write('core/b.test.ts', "vi.mock('x');");
    write('test/reliability/c.long.test.ts', '');
    write('renderer/src/d.test.ts', '');
    write('core/support.ts', "vi.mock('x');");
    write('other/e.test.ts', '');
    expect(splitTestFiles(root)).toEqual({ shared: ['core/a.test.ts', 'renderer/src/d.test.ts'], ownProcess: ['core/b.test.ts'] });
  });

  it('on this repository: every file is in exactly one list, and the files known to mock are in their own process', () => {
    const { shared, ownProcess } = splitTestFiles(resolve(import.meta.dirname, '../..'));
    expect(new Set([...shared, ...ownProcess]).size).toBe(shared.length + ownProcess.length);
    expect(shared).toContain('core/lsm/table.model.test.ts');
    expect(shared).not.toContain('core/replay/cli-out.test.ts');
    expect(ownProcess).toContain('core/replay/cli-out.test.ts');
    expect(ownProcess).toContain('core/lsm/dir-sync-failure.test.ts');
    expect(shared.length).toBeGreaterThan(ownProcess.length);
  });
});
