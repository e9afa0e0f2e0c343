/**
 * Provably fair hash chains (docs/decisions/rounds-and-fairness/0001-hash-chain-per-game-and-epoch.md; the scheme public crash
 * games use). Pure: no clock, no I/O.
 *
 * Per game and epoch: h_N = HMAC-SHA256(key = server seed, msg = "chain:<slug>:<epoch>") and
 * h_(k-1) = SHA-256(h_k) over the raw 32 bytes. The commitment is h_0, published before the
 * first round. Round i of the epoch (1..N) reveals h_i; anyone checks SHA-256^i(h_i) = commitment
 * and SHA-256(h_i) = h_(i-1), the previous round's hash. The result is a pure function of
 * HMAC-SHA256(key = h_i, msg = "<slug>:<commitment hex>").
 */
import { createHmac, hash as oneShotHash } from 'node:crypto';
import { FairnessInputError } from '../errors.ts';

/** Bytes of every chain hash. */
export const HASH_BYTES = 32;
/** Default spacing of stored chain positions: memory N/1000 hashes, at most 1000 hashes per lookup. */
export const DEFAULT_CHECKPOINT_EVERY = 1000;

/** SHA-256 of raw bytes (one-shot `crypto.hash`: no Hash object per call, a replay's hot path). */
export function sha256(bytes: Uint8Array): Buffer {
  return oneShotHash('sha256', bytes, 'buffer');
}

const BLOCK = 64;
const IPAD = 0x36;
const OPAD = 0x5c;

/**
 * HMAC-SHA256 (RFC 2104) as two one-shot SHA-256s: sha256((K ^ opad) || sha256((K ^ ipad) || msg)),
 * K the key zero-padded to the 64-byte block (hashed first when longer). The same bytes as
 * `createHmac('sha256', key)`, which on Node 24 spends most of a short message's time checking
 * whether the key is a KeyObject (about 10 µs a call; 1 µs here): it runs once per round checked.
 */
export function hmacSha256(key: Uint8Array, msg: Uint8Array | string): Buffer {
  const k = key.length > BLOCK ? sha256(key) : key;
  const m = typeof msg === 'string' ? Buffer.from(msg) : msg;
  // Scratch reused across calls: hashing is synchronous, and a round's message is short.
  if (scratch.inner.length < BLOCK + m.length) scratch.inner = Buffer.allocUnsafe(2 * (BLOCK + m.length));
  const { inner, outer } = scratch;
  for (let i = 0; i < BLOCK; i++) {
    const b = i < k.length ? (k[i] as number) : 0;
    inner[i] = b ^ IPAD;
    outer[i] = b ^ OPAD;
  }
  inner.set(m, BLOCK);
  outer.set(sha256(inner.subarray(0, BLOCK + m.length)), BLOCK);
  return sha256(outer);
}

const scratch = { inner: Buffer.allocUnsafe(4 * BLOCK), outer: Buffer.allocUnsafe(BLOCK + HASH_BYTES) };

/** SHA-256 applied `times` times (0 returns a copy). */
export function sha256Times(bytes: Uint8Array, times: number): Buffer {
  let h: Buffer = Buffer.from(bytes);
  for (let i = 0; i < times; i++) h = sha256(h);
  return h;
}

/**
 * Parses a 64-hex-character hash (either case).
 * @throws FairnessInputError naming `what` when it is not 64 hex characters.
 */
export function parseHash(hex: string, what = 'hash'): Buffer {
  // Buffer.from stops at the first pair that is not hex: 64 characters give 32 bytes only when all are.
  const bytes = typeof hex === 'string' && hex.length === 64 ? Buffer.from(hex, 'hex') : undefined;
  if (bytes?.length !== HASH_BYTES) throw new FairnessInputError(`${what} must be 64 hex characters`);
  return bytes;
}

/** h_N of a chain: HMAC-SHA256(key = serverSeed, msg = "chain:<slug>:<epoch>"). */
export function chainSeed(serverSeed: Uint8Array, slug: string, epoch: number): Buffer {
  return createHmac('sha256', serverSeed).update(`chain:${slug}:${epoch}`).digest();
}

/** The bytes a round's result is computed from: HMAC-SHA256(key = revealed hash, msg = "<slug>:<commitment>"). */
export function roundHmac(hash: Uint8Array, slug: string, commitmentHex: string): Buffer {
  // The message is the same for every round of a chain: its bytes are kept per game.
  let m = messages.get(slug);
  if (m?.commitment !== commitmentHex) {
    m = { commitment: commitmentHex, bytes: Buffer.from(`${slug}:${commitmentHex.toLowerCase()}`) };
    messages.set(slug, m);
  }
  return hmacSha256(hash, m.bytes);
}

const messages = new Map<string, { commitment: string; bytes: Buffer }>();

/** One game's chain for one epoch. */
export interface HashChain {
  readonly slug: string;
  readonly epoch: number;
  /** N: rounds the chain serves (indices 1..N). */
  readonly length: number;
  /** h_0 as lower-case hex. */
  readonly commitment: string;
  /** h_index, 0 <= index <= N. @throws FairnessInputError outside that range. */
  hashAt(index: number): Buffer;
}

/**
 * Builds the chain of `slug`/`epoch` with one pass of N hashes, keeping every
 * `checkpointEvery`-th position; `hashAt(i)` hashes down from the nearest checkpoint above i and
 * caches that segment, so walking forward through the rounds costs one hash per round on average.
 * @throws FairnessInputError for a non-positive length or checkpoint spacing, or a negative epoch.
 */
export function buildChain(
  serverSeed: Uint8Array,
  slug: string,
  epoch: number,
  length: number,
  checkpointEvery = DEFAULT_CHECKPOINT_EVERY,
): HashChain {
  if (!Number.isSafeInteger(length) || length < 1) throw new FairnessInputError(`bad chain length ${length}`);
  if (!Number.isSafeInteger(epoch) || epoch < 0) throw new FairnessInputError(`bad chain epoch ${epoch}`);
  if (!Number.isSafeInteger(checkpointEvery) || checkpointEvery < 1)
    throw new FairnessInputError(`bad checkpoint spacing ${checkpointEvery}`);
  const checkpoints = new Map<number, Buffer>();
  let h = chainSeed(serverSeed, slug, epoch);
  checkpoints.set(length, h);
  for (let k = length; k > 0; k--) {
    h = sha256(h);
    if ((k - 1) % checkpointEvery === 0) checkpoints.set(k - 1, h);
  }
  const commitment = h.toString('hex');
  let segment: { top: number; hashes: Buffer[] } | null = null;

  function hashAt(index: number): Buffer {
    if (!Number.isSafeInteger(index) || index < 0 || index > length)
      throw new FairnessInputError(`chain index ${index} outside 0..${length}`);
    const top = Math.min(length, Math.ceil(index / checkpointEvery) * checkpointEvery);
    if (segment?.top !== top) {
      const bottom = Math.floor((top - 1) / checkpointEvery) * checkpointEvery;
      let cur = checkpoints.get(top) as Buffer;
      const hashes = [cur];
      for (let k = top; k > Math.max(bottom, 0); k--) {
        cur = sha256(cur);
        hashes.push(cur);
      }
      segment = { top, hashes };
    }
    return Buffer.from(segment.hashes[top - index] as Buffer);
  }

  return { slug, epoch, length, commitment, hashAt };
}

/**
 * True when SHA-256 applied `index` times to `hashHex` gives `commitmentHex`.
 * @throws FairnessInputError for malformed hex or an index that is not a positive safe integer.
 */
export function verifyChain(hashHex: string, index: number, commitmentHex: string): boolean {
  return chainReaches(parseHash(hashHex, 'hash'), index, parseHash(commitmentHex, 'commitment'));
}

/**
 * True when SHA-256 applied `steps` times to `hash` gives `target` (raw 32-byte hashes).
 * @throws FairnessInputError when `steps` is not a positive safe integer.
 */
export function chainReaches(hash: Uint8Array, steps: number, target: Uint8Array): boolean {
  if (!Number.isSafeInteger(steps) || steps < 1)
    throw new FairnessInputError(`chain index must be an integer >= 1, got ${steps}`);
  let h = hash;
  for (let i = 0; i < steps; i++) h = sha256(h);
  return Buffer.compare(h, target) === 0;
}

/** True when SHA-256(hash) is the previous round's hash (adjacent rounds of one chain). */
export function verifyLink(hashHex: string, previousHashHex: string): boolean {
  return sha256(parseHash(hashHex, 'hash')).equals(parseHash(previousHashHex, 'previous hash'));
}
