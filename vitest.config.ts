import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';
import { OneQueueSequencer } from './test/helpers/sequencer.ts';
import { splitTestFiles } from './test/helpers/test-isolation.ts';

// Two projects over the same files: those that leave the process as they found it share a worker
// with other files (`isolate: false`: the fork and the module graph once per worker, not once per
// file), the rest get a fresh process each. test/helpers/test-isolation.ts says which is which.
const { shared, ownProcess } = splitTestFiles(import.meta.dirname);

export default defineConfig({
  test: {
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // At least two files at once. Vitest's default (one less than the cores) ran the suite one file
    // at a time on CI's two cores: 1,489 s, near the 30-minute line. Much of it waits on child
    // processes, fsyncs, brokers and chromium; two at a time took 975 s under CI=true, every
    // test passing (2026-12-06).
    maxWorkers: Math.max(2, availableParallelism() - 1),
    reporters: ['default', './scripts/summary-reporter.ts'],
    sequence: { sequencer: OneQueueSequencer },
    // The files of each project are listed one by one (no include at the root: a project that
    // extends the root adds its include to the root's, and every file would run twice).
    projects: [
      { extends: true, test: { name: 'shared', isolate: false, include: shared } },
      { extends: true, test: { name: 'own-process', include: ownProcess } },
    ],
  },
});
