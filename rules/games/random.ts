/**
 * Turning the round HMAC (32 bytes) into numbers. Every game reads its randomness through these
 * helpers so the published verification rules stay few and exact (integer arithmetic only; no
 * floating-point rounding that a verifier in another language could reproduce differently).
 */

/** 2^52, the range of `uniform52`. */
export const TWO_POW_52 = 2 ** 52;

/**
 * The first 52 bits of `bytes` (the first 13 hex characters of its hex form, the bustabit
 * convention) as an integer in [0, 2^52).
 * @throws RangeError when `bytes` is shorter than 7 bytes.
 */
export function uniform52(bytes: Uint8Array): number {
  if (bytes.length < 7) throw new RangeError(`need at least 7 bytes, got ${bytes.length}`);
  let n = 0;
  for (let i = 0; i < 6; i++) n = n * 256 + (bytes[i] as number);
  return n * 16 + ((bytes[6] as number) >> 4);
}

/**
 * floor(uniform52 * k / 2^52): an integer in [0, k), computed exactly with BigInt. The bias from
 * 2^52 not being a multiple of k is below k / 2^52 per outcome.
 * @throws RangeError when k is not a positive safe integer.
 */
export function pick52(bytes: Uint8Array, k: number): number {
  if (!Number.isSafeInteger(k) || k < 1) throw new RangeError(`k must be a positive integer, got ${k}`);
  return Number((BigInt(uniform52(bytes)) * BigInt(k)) >> 52n);
}
