/**
 * The closing line of `npm test` (scripts/test.sh): the counts of every vitest tier that ran, added
 * up from the JSON reports the tiers wrote, as one plain line `tests: N passed, N failed, N skipped`.
 *
 * Why: vitest's own summary ("Tests  1081 passed (1081)") is printed once per tier and in a shape
 * that log readers outside the JavaScript world do not know; CI reads the run's closing line to
 * tell a run that executed tests from one that executed none, and the plain "N passed, N failed"
 * line is the form it reads in any language. A tier that did not run (the script stopped earlier)
 * has no report and counts nothing; a report that cannot be read is named on stderr and counts as
 * one failure, so a broken report never reads as a clean run; so does a test file that failed
 * without a failing test (it could not be loaded, or a hook failed: vitest reports its tests as
 * skipped and its failed-test count stays 0).
 *
 * Usage: node scripts/test-summary.ts <report.json>...   (prints to stdout; exit 0)
 */
import { existsSync, readFileSync } from 'node:fs';

/** The fields of vitest's JSON reporter (Jest's aggregated-result shape) that are added up. */
interface JsonReport {
  readonly numPassedTests: number;
  readonly numFailedTests: number;
  readonly numPendingTests: number;
  readonly numTodoTests: number;
  /** One per test file: a file that failed to load or in a hook is `failed` with no failed test. */
  readonly testResults?: readonly {
    readonly status?: string;
    readonly assertionResults?: readonly { readonly status?: string }[];
  }[];
}

/** Test files that failed without a failing test of their own (an import error, a failing hook). */
const failedFilesWithoutFailedTest = (r: Partial<JsonReport>): number =>
  (r.testResults ?? []).filter(
    (f) => f.status === 'failed' && !(f.assertionResults ?? []).some((a) => a.status === 'failed'),
  ).length;

/** Counts of one or more tiers. */
export interface Counts {
  passed: number;
  failed: number;
  skipped: number;
}

const isCount = (n: unknown): n is number => typeof n === 'number' && Number.isInteger(n) && n >= 0;

/**
 * Adds the counts of the JSON reports at `files` (absent files are tiers that did not run).
 * @returns the sum; an unreadable or malformed report adds one failure and is named on stderr.
 */
export function sumReports(files: readonly string[]): Counts {
  const total: Counts = { passed: 0, failed: 0, skipped: 0 };
  for (const file of files) {
    if (!existsSync(file)) continue;
    try {
      const r = JSON.parse(readFileSync(file, 'utf8')) as Partial<JsonReport>;
      const fields = [r.numPassedTests, r.numFailedTests, r.numPendingTests, r.numTodoTests];
      if (!fields.every(isCount)) throw new Error('missing or non-integer test counts');
      total.passed += r.numPassedTests as number;
      // A file that never ran its tests counts as one failure (its tests are reported skipped).
      total.failed += (r.numFailedTests as number) + failedFilesWithoutFailedTest(r);
      total.skipped += (r.numPendingTests as number) + (r.numTodoTests as number);
    } catch (err) {
      process.stderr.write(`[test] report ${file} unreadable: ${(err as Error).message}\n`);
      total.failed += 1;
    }
  }
  return total;
}

/** The plain closing line. */
export const closingLine = (c: Counts): string =>
  `tests: ${c.passed} passed, ${c.failed} failed, ${c.skipped} skipped`;

if (import.meta.url === `file://${process.argv[1]}`) {
  process.stdout.write(`${closingLine(sumReports(process.argv.slice(2)))}\n`);
}
