import { defineConfig } from 'vitest/config';
import { isDriverArrayTypesFetch } from './lib/db/pool.ts';

/**
 * Test tiers (docs/conventions.md §9): the tier is in the file name.
 * - unit: pure code, no broker and no database.
 * - int: against the real broker (KAFKA_BROKERS) and Postgres (DATABASE_URL) that scripts/test.sh starts.
 * - e2e: whole processes (services started as child processes) and the compose check.
 */
export default defineConfig({
  test: {
    // postgres.js's dropped array-types fetch (lib/db/pool.ts): only that signature is ignored.
    onUnhandledError: (error) => (isDriverArrayTypesFetch(error) ? false : undefined),
    projects: [
      {
        test: {
          name: 'unit',
          include: ['**/*.unit.test.ts'],
          exclude: ['node_modules/**', '.cache/**'],
          // Unit files run in parallel on 2 cores; a few spawn tsx or hash 10^5 seeds: 20 s, not 5.
          testTimeout: 20_000,
        },
      },
      {
        test: {
          name: 'int',
          include: ['**/*.int.test.ts'],
          exclude: ['node_modules/**', '.cache/**'],
          testTimeout: 60_000,
          hookTimeout: 60_000,
          fileParallelism: false,
        },
      },
      {
        test: {
          name: 'e2e',
          include: ['**/*.e2e.test.ts'],
          exclude: ['node_modules/**', '.cache/**'],
          testTimeout: 180_000,
          hookTimeout: 120_000,
          fileParallelism: false,
        },
      },
    ],
  },
});
