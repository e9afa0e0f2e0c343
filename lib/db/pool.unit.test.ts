/**
 * The guard against postgres.js's dropped array-types rejection (pool.ts), in child processes of
 * their own (a process's unhandled-rejection behaviour is what is tested): that rejection leaves the
 * process running to its normal end (exit 0); any other unhandled rejection still ends it (exit 1),
 * as Node's default does.
 */
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { isDriverArrayTypesFetch } from './pool.ts';

const DRIVER_QUERY =
  'select b.oid, b.typarray from pg_catalog.pg_type a left join pg_catalog.pg_type b on b.oid = a.typelem';

/** Runs a module that installs the guard and then rejects `reason` (JS source) unhandled. */
function run(reason: string): { status: number | null; stdout: string; stderr: string } {
  const source = `
    import { guardDriverRejections } from './lib/db/pool.ts';
    guardDriverRejections();
    Promise.reject(${reason});
    setTimeout(() => process.stdout.write('still running'), 50);
  `;
  const r = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', source], {
    encoding: 'utf8',
    timeout: 20_000,
  });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('isDriverArrayTypesFetch', () => {
  it.each([
    ['a connection cut during the driver query', { query: DRIVER_QUERY, code: 'CONNECTION_CLOSED' }, true],
    ['an admin shutdown during it', { query: DRIVER_QUERY, code: '57P01' }, true],
    ['another error of the driver query', { query: DRIVER_QUERY, code: '42P01' }, false],
    ['a connection cut during another query', { query: 'select 1', code: 'CONNECTION_CLOSED' }, false],
    ['a plain error', new Error('boom'), false],
    ['nothing', undefined, false],
  ])('%s → %s', (_what, error, expected) => {
    expect(isDriverArrayTypesFetch(error)).toBe(expected);
  });
});

describe('guardDriverRejections', () => {
  it("keeps the process running through the driver's dropped rejection", () => {
    const r = run(
      `Object.assign(new Error('write CONNECTION_CLOSED'), { query: ${JSON.stringify(DRIVER_QUERY)}, code: 'CONNECTION_CLOSED' })`,
    );
    expect(r.stderr).not.toContain('CONNECTION_CLOSED');
    expect(r.stdout).toBe('still running');
    expect(r.status).toBe(0);
  });

  it('ends the process on any other unhandled rejection', () => {
    const r = run(`new Error('something else went wrong')`);
    expect(r.status).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain('something else went wrong');
  });
});
