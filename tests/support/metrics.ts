/**
 * Reading Prometheus text exposition in tests (the parser is lib/metrics-text.ts): one sample's value
 * or a sum, whatever labels a test does not name.
 */

import { samplesOf } from '../../lib/metrics-text.ts';

export { parseMetrics, type Sample, samplesOf } from '../../lib/metrics-text.ts';

/** The value of the one sample of `name` matching `labels`; undefined when none. @throws when several match. */
export function sampleValue(
  text: string,
  name: string,
  labels: Record<string, string> = {},
): number | undefined {
  const found = samplesOf(text, name, labels);
  if (found.length > 1)
    throw new Error(`${found.length} samples of ${name} match ${JSON.stringify(labels)}; name more labels`);
  return found[0]?.value;
}

/** Sum of the samples of `name` matching `labels` (0 when none). */
export function sampleSum(text: string, name: string, labels: Record<string, string> = {}): number {
  return samplesOf(text, name, labels).reduce((n, s) => n + s.value, 0);
}
