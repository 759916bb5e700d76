import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['core/**/*.test.ts', 'test/**/*.test.ts', 'scripts/**/*.test.ts', 'electron/**/*.test.ts', 'bench/**/*.test.ts', 'renderer/**/*.test.ts'],
    exclude: ['node_modules/**', 'test/reliability/**/*.long.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // At least two files at once. Vitest's default (one less than the cores) ran the suite one file
    // at a time on CI's two cores: 1,489 s, near the 30-minute line. Much of it waits on child
    // processes, fsyncs, brokers and chromium; two at a time took 975 s under CI=true, every
    // test passing (2026-12-06).
    maxWorkers: Math.max(2, availableParallelism() - 1),
    reporters: ['default', './scripts/summary-reporter.ts'],
  },
});
