// The benchmark's smoke test runs on its own (the root vitest.config.ts includes core/, test/ and
// scripts/ only): npx vitest run --config bench/vitest.config.ts
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['bench/**/*.test.ts'],
    testTimeout: 900_000,
    hookTimeout: 60_000,
    pool: 'forks',
  },
});
