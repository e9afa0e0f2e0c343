import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { closingLine, sumReports } from '../scripts/test-summary.ts';

const dir = mkdtempSync(join(tmpdir(), 'test-summary-'));
const report = (name: string, body: unknown): string => {
  const file = join(dir, name);
  writeFileSync(file, typeof body === 'string' ? body : JSON.stringify(body));
  return file;
};
const counts = (passed: number, failed: number, pending = 0, todo = 0) => ({
  numPassedTests: passed,
  numFailedTests: failed,
  numPendingTests: pending,
  numTodoTests: todo,
  numTotalTests: passed + failed + pending + todo,
});

describe('the closing line of npm test', () => {
  it('adds up the tiers that ran, skipped and todo together', () => {
    const files = [report('u.json', counts(1081, 0, 2)), report('i.json', counts(1059, 1, 0, 1))];
    expect(closingLine(sumReports(files))).toBe('tests: 2140 passed, 1 failed, 3 skipped');
  });

  it('counts nothing for a tier without a report (it did not run)', () => {
    const files = [report('only.json', counts(5, 0)), join(dir, 'absent.json')];
    expect(sumReports(files)).toEqual({ passed: 5, failed: 0, skipped: 0 });
  });

  it('counts an unreadable or malformed report as a failure, never as a clean run', () => {
    const files = [report('broken.json', '{"numPassedTests":'), report('odd.json', { numPassedTests: 3 })];
    expect(sumReports(files)).toEqual({ passed: 0, failed: 2, skipped: 0 });
  });

  it('counts a test file that failed to load (its tests skipped, no failed test) as a failure', () => {
    // The shape vitest wrote for tests/build.e2e.test.ts when its beforeAll threw (2026-11-27).
    const loadFailure = {
      ...counts(94, 0, 6),
      testResults: [
        { status: 'passed', assertionResults: [{ status: 'passed' }] },
        { status: 'failed', message: 'EISDIR', assertionResults: [{ status: 'skipped' }] },
        { status: 'failed', assertionResults: [{ status: 'failed' }, { status: 'passed' }] },
      ],
      numFailedTests: 1,
    };
    expect(sumReports([report('load.json', loadFailure)])).toEqual({ passed: 94, failed: 2, skipped: 6 });
  });

  it('prints the line in the plain "N passed, N failed" form when run as a script', () => {
    const out = execFileSync(process.execPath, [
      '--import',
      'tsx',
      join(import.meta.dirname, '../scripts/test-summary.ts'),
      report('s.json', counts(7, 0)),
    ]).toString();
    expect(out).toBe('tests: 7 passed, 0 failed, 0 skipped\n');
    expect(out.trim()).toMatch(/^(\w+: )?\d+ passed, \d+ failed(, \d+ skipped)?$/);
  });
});
