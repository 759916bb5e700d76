import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['core/**/*.test.ts', 'test/**/*.test.ts', 'scripts/**/*.test.ts', 'electron/**/*.test.ts', 'bench/**/*.test.ts', 'renderer/**/*.test.ts'],
    exclude: ['node_modules/**', 'test/reliability/**/*.long.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    reporters: ['default', './scripts/summary-reporter.ts'],
  },
});
