/**
 * Parsers of the dead-letter command's option values, for commander: each returns the value or
 * throws InvalidArgumentError, which commander prints naming the option (`error: option '--from
 * <time>' argument 'x' is invalid. …`) and the command exits 2.
 */
import { InvalidArgumentError } from 'commander';

/** `partition:offset` (e.g. `0:12`), appended to `previous` (a repeatable option). */
export function position(v: string, previous: { partition: number; offset: bigint }[] = []) {
  const m = /^(\d{1,5}):(\d{1,19})$/.exec(v);
  if (!m) throw new InvalidArgumentError(`expected partition:offset, e.g. 0:12; got "${v}"`);
  return [...previous, { partition: Number(m[1]), offset: BigInt(m[2] as string) }];
}

/** A provider_tx_id (a safe integer of up to 16 digits), appended to `previous` (repeatable). */
export function txId(v: string, previous: number[] = []): number[] {
  return [...previous, oneTxId(v)];
}

/** One provider_tx_id: decimal digits, a safe integer. */
export function oneTxId(v: string): number {
  if (!/^\d{1,16}$/.test(v) || !Number.isSafeInteger(Number(v)))
    throw new InvalidArgumentError(`not a provider_tx_id: "${v}"`);
  return Number(v);
}

/** A case-insensitive regular expression. */
export function pattern(v: string): RegExp {
  try {
    return new RegExp(v, 'i');
  } catch (err) {
    throw new InvalidArgumentError(`not a regular expression: ${(err as Error).message}`);
  }
}

/** An integer from `min` to `max`. */
export const intIn = (min: number, max: number) => (v: string) => {
  if (!/^\d{1,7}$/.test(v) || Number(v) < min || Number(v) > max)
    throw new InvalidArgumentError(`an integer from ${min} to ${max}`);
  return Number(v);
};

/** Text of 1..`max` characters (an operator or player id; argv cannot hold a NUL). */
export const textOf = (max: number) => (v: string) => {
  if (v.length === 0 || v.length > max) throw new InvalidArgumentError(`1 to ${max} characters`);
  return v;
};

const ISO_8601 = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?(Z|[+-]\d{2}:\d{2}))?$/;

/**
 * An ISO 8601 date (midnight UTC) or date-time with a zone (`Z` or `±hh:mm`), as Unix ms. A time
 * without a zone is refused: it would be read in this machine's zone.
 */
export function isoTime(v: string): number {
  const ms = ISO_8601.test(v) ? Date.parse(v) : Number.NaN;
  if (!Number.isFinite(ms))
    throw new InvalidArgumentError(
      'an ISO 8601 date or date-time with a zone, e.g. 2026-01-31 or 2026-01-31T12:00:00Z',
    );
  return ms;
}
