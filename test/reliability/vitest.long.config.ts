// Long mode of the reliability suites: `npm run test:long` (TILSTAND_LONG=1). Runs every file under
// test/reliability, `*.long.test.ts` included (the default config leaves those out), one file at a
// time so the trials do not compete for the two cores.
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    root: new URL('../..', import.meta.url).pathname,
    include: ['test/reliability/**/*.test.ts'],
    exclude: ['node_modules/**'],
    testTimeout: 4 * 3600_000,
    hookTimeout: 600_000,
    pool: 'forks',
    fileParallelism: false,
    reporters: ['default'],
  },
});
