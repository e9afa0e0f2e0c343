/**
 * Goodness of fit: Pearson's chi-square statistic of observed counts against expected
 * probabilities, with its p-value from the chi-squared distribution (stdlib's CDF), and the
 * Wald–Wolfowitz runs test of a two-valued sequence (NIST SP 800-22 §2.3 uses the same counts).
 */
import chisquareCdf from '@stdlib/stats-base-dists-chisquare-cdf';

export interface ChiSquare {
  /** Σ (observed − expected)² / expected. */
  readonly statistic: number;
  /** Categories − 1. */
  readonly df: number;
  /** P(χ²(df) ≥ statistic): small (say < 0.001) means the counts do not fit the expectation. */
  readonly p_value: number;
  /** Some expected count is below 5, where the chi-square approximation is poor (Cochran's rule). */
  readonly low_expected: boolean;
}

/**
 * Pearson's chi-square test. `probabilities` need not be normalised (they are scaled to sum 1).
 * @returns null when there are no observations or fewer than two categories.
 * @throws RangeError when the two arrays differ in length or a probability is negative.
 */
export function chiSquare(observed: readonly number[], probabilities: readonly number[]): ChiSquare | null {
  if (observed.length !== probabilities.length)
    throw new RangeError(`${observed.length} counts for ${probabilities.length} probabilities`);
  if (probabilities.some((p) => p < 0)) throw new RangeError('negative probability');
  const n = observed.reduce((a, b) => a + b, 0);
  const total = probabilities.reduce((a, b) => a + b, 0);
  if (n === 0 || observed.length < 2 || total <= 0) return null;
  let statistic = 0;
  let lowExpected = false;
  for (let i = 0; i < observed.length; i++) {
    const expected = (n * (probabilities[i] as number)) / total;
    if (expected < 5) lowExpected = true;
    // A count where none is expected makes the fit impossible: an infinite statistic, p = 0.
    statistic +=
      expected === 0
        ? (observed[i] as number) > 0
          ? Infinity
          : 0
        : ((observed[i] as number) - expected) ** 2 / expected;
  }
  const df = observed.length - 1;
  return { statistic, df, p_value: pValue(statistic, df), low_expected: lowExpected };
}

/** Upper tail of the chi-squared distribution with `df` degrees of freedom at `x`. */
export function pValue(x: number, df: number): number {
  if (x === Infinity) return 0;
  return Math.max(0, 1 - chisquareCdf(x, df));
}

export interface RunsTest {
  /** Runs (maximal blocks of equal values) observed. */
  readonly runs: number;
  /** 2·n1·n2 / n + 1. */
  readonly expected_runs: number;
  /** (runs − expected) / σ. */
  readonly z: number;
  /** Two-sided: P(|Z| ≥ |z|). */
  readonly p_value: number;
}

/**
 * Wald–Wolfowitz runs test: are the values of a two-valued sequence independent? Too few runs
 * means streaks longer than chance; too many means too much alternation.
 * @param n1 count of the first value, `n2` of the second, `runs` runs observed.
 * @returns null when either value never occurs (the variance is 0).
 */
export function runsTest(n1: number, n2: number, runs: number): RunsTest | null {
  const n = n1 + n2;
  if (n1 === 0 || n2 === 0 || n < 3) return null;
  const mu = (2 * n1 * n2) / n + 1;
  const variance = ((mu - 1) * (mu - 2)) / (n - 1);
  if (variance <= 0) return null;
  const z = (runs - mu) / Math.sqrt(variance);
  // Z² is χ²(1), so the chi-squared tail at z² is the two-sided normal tail at z.
  return { runs, expected_runs: mu, z, p_value: pValue(z * z, 1) };
}
