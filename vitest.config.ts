import { defineConfig } from 'vitest/config';

/**
 * Test tiers (STYLE.md §9): the tier is in the file name.
 * - unit: pure code, no broker and no database.
 * - int: against the real broker (KAFKA_BROKERS) and Postgres (DATABASE_URL) that scripts/test.sh starts.
 * - e2e: whole processes (services started as child processes) and the compose check.
 */
/**
 * postgres.js runs its own array-types query (`pg_catalog.pg_type`, option fetch_types) as the first
 * statement of every new connection and drops that promise, so a connection cut during it (the
 * outage tests cut Postgres through a TCP proxy) surfaces as an unhandled rejection nobody can catch;
 * the query of the caller fails or succeeds on its own. Upstream, open: porsager/postgres#1192,
 * #1205, #1223. Only that signature is ignored; every other unhandled error still fails the run.
 */
function isDriverArrayTypesFetch(error: { code?: unknown; query?: unknown }): boolean {
  return (
    typeof error.query === 'string' &&
    error.query.includes('pg_catalog.pg_type') &&
    error.query.includes('typarray') &&
    typeof error.code === 'string' &&
    (error.code.startsWith('CONNECTION_') || error.code === '57P01')
  );
}

export default defineConfig({
  test: {
    onUnhandledError: (error) => (isDriverArrayTypesFetch(error as never) ? false : undefined),
    projects: [
      { test: { name: 'unit', include: ['**/*.unit.test.ts'], exclude: ['node_modules/**', '.cache/**'] } },
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
