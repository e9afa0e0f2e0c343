/**
 * Deterministic pseudo-random 32-byte inputs for distribution tests: SHA-256("sample:<i>").
 * SHA-256 output is indistinguishable from uniform bytes, and a fixed sample keeps the tests
 * reproducible (a failure is a real change, never bad luck of the draw).
 */
import { createHash } from 'node:crypto';

/** The i-th sample input. */
export function sampleBytes(i: number): Buffer {
  return createHash('sha256').update(`sample:${i}`).digest();
}

/** Sample size of the distribution tests. */
export const SAMPLE_SIZE = 200_000;

/**
 * Five standard errors of a proportion p over n draws: a correct implementation lands inside
 * with probability 1 - 6e-7, while a shift of one percentage point of the house edge does not.
 */
export function tolerance(p: number, n: number, z = 5): number {
  return z * Math.sqrt((p * (1 - p)) / n);
}
