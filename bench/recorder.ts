/**
 * What a benchmark subscriber keeps of its deliveries, in any runtime (Node's client processes,
 * bench/edge-wt-load.ts under Deno): the receive time against the round's `timestamp` (the Kafka
 * append time, Unix ms; both clocks are this machine's), and the reading of that timestamp from
 * the bytes of a stream-form round.
 */
import { Buffer } from 'node:buffer';

/** Wall-clock ms with sub-ms resolution, comparable with Date.now() of other processes. */
export const wallNow = (): number => performance.timeOrigin + performance.now();

/**
 * Collects latencies (ms) of deliveries whose timestamp is at or after `since`, with each
 * delivery's timestamp (which identifies its round: rounds are appended ms apart or more).
 */
export class Recorder {
  latencies = new Float64Array(1 << 16);
  timestamps = new Float64Array(1 << 16);
  count = 0;
  first = 0;
  last = 0;
  since = Number.POSITIVE_INFINITY;

  reset(since: number): void {
    this.count = 0;
    this.first = 0;
    this.last = 0;
    this.since = since;
  }

  /** Records a delivery of the round appended at `timestamp` (Unix ms). @returns whether it counted. */
  add(timestamp: number): boolean {
    if (!(timestamp >= this.since)) return false;
    const now = wallNow();
    if (this.count === this.latencies.length) {
      const grow = (a: Float64Array) => {
        const g = new Float64Array(a.length * 2);
        g.set(a);
        return g;
      };
      this.latencies = grow(this.latencies);
      this.timestamps = grow(this.timestamps);
    }
    this.timestamps[this.count] = timestamp;
    this.latencies[this.count++] = now - timestamp;
    if (this.first === 0) this.first = now;
    this.last = now;
    return true;
  }
}

/** The key before a stream-form round's append time. */
export const TS_KEY = Buffer.from('"timestamp":');

/** The integer after `"timestamp":` in `buf[start, end)`, or NaN. */
export function timestampIn(buf: Buffer, start: number, end: number): number {
  const at = buf.subarray(start, end).lastIndexOf(TS_KEY);
  return at < 0 ? Number.NaN : integerAt(buf, start + at + TS_KEY.length, end);
}

/** The decimal digits of `buf` from `from` (before `end`) as a number. */
export function integerAt(buf: Buffer, from: number, end: number): number {
  let n = 0;
  for (let i = from; i < end; i++) {
    const c = buf[i] as number;
    if (c < 48 || c > 57) break;
    n = n * 10 + (c - 48);
  }
  return n;
}
