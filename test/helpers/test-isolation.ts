// Which test files may share a worker process with others (vitest's `isolate: false`) and which
// need one of their own, for vitest.config.ts's two projects.
//
// A fresh process per file costs about 0.45 s of CPU each (the fork and the module graph evaluated
// again: a CLI test imports most of core/), 730 files in all: with 658 of them sharing, vitest took
// 806 s on 2 cores where a fresh process for every file took 1,139 s (2026-12-08). A file shares
// only when nothing in it changes the process for the files after it. Read from the file's own
// text, so a new test that mocks a module or fakes timers goes to its own process without anyone
// remembering to list it (the renderer's and the Electron shell's files that mock nothing share too:
// they passed shared in vitest's order and three shuffled ones, 2026-12-08):
// - a module mock (the renderer's fake React, the Electron shell's fake electron), fake timers, a
//   stubbed global or environment variable;
// - process-wide changes: the working directory, the umask, process listeners, environment
//   variables written or deleted, globalThis;
// - node:fs patched for a test (core/lsm/testing/fsync-spy.ts and fs-faults.ts);
// - a file that says `// vitest: own process` (for a reason the patterns above do not see).
// A spy (`vi.spyOn`) does not need a process of its own: vitest puts every spy back when its file
// ends, in a shared worker too (shared-worker-spies.test.ts holds it to that).

import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';

/** The folders the suite's test files live in, relative to the repository's root. */
export const TEST_ROOTS = ['core', 'test', 'scripts', 'electron', 'bench', 'renderer'] as const;

const OWN_PROCESS_TEXT: readonly RegExp[] = [
  /\bvi\.(mock|doMock|unmock|useFakeTimers|stubGlobal|stubEnv|resetModules)\(/,
  /\bprocess\.(chdir|umask|on|once|addListener|prependListener|setUncaughtExceptionCaptureCallback)\(/,
  /\bprocess\.env(\.[A-Za-z_$][\w$]*|\[[^\]]+\])\s*(=(?!=)|\?\?=|\|\|=)/,
  /\bdelete\s+process\.env\b/,
  /\bObject\.assign\(\s*process\.env\b/,
  /\bglobalThis\./,
  /fsync-spy|fs-faults|syncBuiltinESMExports/,
  /\/\/ vitest: own process\b/,
];

export interface TestSplit {
  /** Files that run in a worker shared with other files (`isolate: false`). */
  shared: string[];
  /** Files that each run in a fresh process. */
  ownProcess: string[];
}

/** Does a test file whose text is `text` need a process of its own? */
export function needsOwnProcess(text: string): boolean {
  return OWN_PROCESS_TEXT.some((re) => re.test(text));
}

/** Is `path` one of the suite's test files (vitest.config.ts's `include` less its `exclude`)? */
export function isSuiteTestFile(path: string): boolean {
  if (!path.endsWith('.test.ts')) return false;
  if (path.split('/').includes('node_modules')) return false;
  if (path.startsWith('test/reliability/') && path.endsWith('.long.test.ts')) return false;
  return TEST_ROOTS.some((r) => path.startsWith(`${r}/`));
}

/** Every test file of the suite under `root`, split by `needsOwnProcess`; both lists sorted. */
export function splitTestFiles(root: string): TestSplit {
  const split: TestSplit = { shared: [], ownProcess: [] };
  const walk = (dir: string): void => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      if (e.name === 'node_modules' || e.name.startsWith('.')) continue;
      const full = join(dir, e.name);
      if (e.isDirectory()) walk(full);
      else if (e.isFile()) {
        const path = relative(root, full).split('\\').join('/');
        if (!isSuiteTestFile(path)) continue;
        (needsOwnProcess(readFileSync(full, 'utf8')) ? split.ownProcess : split.shared).push(path);
      }
    }
  };
  for (const r of TEST_ROOTS) if (existsSync(join(root, r))) walk(join(root, r));
  split.shared.sort();
  split.ownProcess.sort();
  return split;
}
