/**
 * Shared pieces of the benchmarks: latency percentiles (HdrHistogram), result printing and the
 * machine-readable results file.
 * Benchmarks print their figures; they assert nothing (targets are checked by reading them).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { build } from 'hdr-histogram-js';

/** How many durations, and their median, 99th percentile and maximum, ms (NaN when none). */
export interface LatencySummary {
  readonly n: number;
  readonly p50: number;
  readonly p99: number;
  readonly max: number;
}

/**
 * p50, p99 and max of durations in ms, by HdrHistogram: each value is recorded in whole
 * microseconds (a negative one as 0) with 3 significant digits, so a percentile is the
 * nearest-rank value to within 0.1 % (and 1 µs), and `max` is the largest value to the microsecond.
 * A percentile is never above `max` (the histogram reports the top of a value's bucket).
 */
export function latencySummary(values: Iterable<number>): LatencySummary {
  const h = build({ numberOfSignificantValueDigits: 3 });
  for (const v of values) h.recordValue(Math.max(0, Math.round(v * 1000)));
  const n = h.totalCount;
  const ms = (us: number) => (n === 0 ? Number.NaN : Math.min(us, h.maxValue) / 1000);
  return { n, p50: ms(h.getValueAtPercentile(50)), p99: ms(h.getValueAtPercentile(99)), max: ms(h.maxValue) };
}

/** Prints a titled table of rows. */
export function report(title: string, rows: Record<string, string | number>[]): void {
  console.log(`\n## ${title}`);
  console.table(rows);
}

/**
 * Writes a benchmark's machine-readable results to bench/results/<name>-<UTC timestamp>.json
 * (git-ignored) with the node version, CPUs and load average of the run.
 * @returns the file's path.
 */
export function writeResults(name: string, results: unknown): string {
  const dir = join(import.meta.dirname, 'results');
  mkdirSync(dir, { recursive: true });
  const at = new Date().toISOString();
  const file = join(dir, `${name}-${at.replace(/[:.]/g, '-')}.json`);
  const machine = { node: process.version, cpus: cpus().length, cpu: cpus()[0]?.model, loadavg: loadavg() };
  writeFileSync(file, `${JSON.stringify({ bench: name, at, machine, ...(results as object) }, null, 2)}\n`);
  return file;
}
