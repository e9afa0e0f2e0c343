/**
 * Shared pieces of the benchmarks: synthetic rounds, percentile maths, result printing and the
 * machine-readable results file.
 * Benchmarks print their figures; they assert nothing (targets are checked by reading them).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';

/** The p-th percentile (0..100) of `values` (nearest-rank). */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank] as number;
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
