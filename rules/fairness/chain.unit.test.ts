import { createHash, createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { FairnessInputError } from '../errors.ts';
import {
  buildChain,
  chainSeed,
  hmacSha256,
  parseHash,
  roundHmac,
  sha256,
  sha256Times,
  verifyChain,
  verifyLink,
} from './chain.ts';

const SEED = Buffer.alloc(32);

/** The chain computed the obvious way: all N+1 hashes, h_N = seed, h_(k-1) = sha256(h_k). */
function naiveChain(slug: string, epoch: number, n: number): Buffer[] {
  const out: Buffer[] = new Array(n + 1);
  out[n] = chainSeed(SEED, slug, epoch);
  for (let k = n; k > 0; k--) out[k - 1] = sha256(out[k] as Buffer);
  return out;
}

function tamper(hex: string): string {
  return (hex[0] === '0' ? '1' : '0') + hex.slice(1);
}

describe('hash chain', () => {
  it('matches an independent implementation (Python hashlib/hmac) of the published rules', () => {
    // python3: h = hmac.new(bytes(32), b"chain:crash:0", sha256).digest(); hash down 10 times.
    const chain = buildChain(SEED, 'crash', 0, 10);
    expect(chain.commitment).toBe('d0a5138a4fad2e3c20b047db32a0fca1264983d1ba151a018eed83e4c1c458bd');
    expect(chain.hashAt(3).toString('hex')).toBe(
      'b8e2a104258a67a49afaf3211f34dfb01056df48af32ec29ad4f98d20681eb7a',
    );
  });

  it.each([
    [1, 1],
    [10, 3],
    [2500, 1000],
    [257, 16],
  ])('serves every position of a chain of %d with checkpoints every %d', (n, every) => {
    const naive = naiveChain('double', 2, n);
    const chain = buildChain(SEED, 'double', 2, n, every);
    expect(chain.commitment).toBe((naive[0] as Buffer).toString('hex'));
    // Forward (the engine's order), then a few random jumps back and forth.
    for (let i = 0; i <= n; i++) expect(chain.hashAt(i).equals(naive[i] as Buffer)).toBe(true);
    for (const i of [n, 0, Math.floor(n / 2), 1, n - 1].filter((i) => i >= 0))
      expect(chain.hashAt(i).equals(naive[i] as Buffer)).toBe(true);
  });

  it('differs per game and per epoch', () => {
    const commitments = new Set(
      ['crash', 'double'].flatMap((slug) => [0, 1].map((e) => buildChain(SEED, slug, e, 20).commitment)),
    );
    expect(commitments.size).toBe(4);
  });

  it('returns copies, so a caller cannot corrupt the cache', () => {
    const chain = buildChain(SEED, 'slot', 0, 50, 10);
    const h = chain.hashAt(7);
    const before = h.toString('hex');
    h.fill(0);
    expect(chain.hashAt(7).toString('hex')).toBe(before);
  });

  it('rejects bad arguments', () => {
    expect(() => buildChain(SEED, 'crash', 0, 0)).toThrow(FairnessInputError);
    expect(() => buildChain(SEED, 'crash', -1, 10)).toThrow(FairnessInputError);
    expect(() => buildChain(SEED, 'crash', 0, 10, 0)).toThrow(FairnessInputError);
    const chain = buildChain(SEED, 'crash', 0, 10);
    expect(() => chain.hashAt(11)).toThrow(/outside 0..10/);
    expect(() => chain.hashAt(-1)).toThrow(FairnessInputError);
    expect(() => chain.hashAt(1.5)).toThrow(FairnessInputError);
  });
});

describe('verification', () => {
  const n = 30;
  const chain = buildChain(SEED, 'wall-street', 0, n, 7);

  it('accepts every revealed hash against the commitment and links neighbours', () => {
    for (let i = 1; i <= n; i++) {
      const h = chain.hashAt(i).toString('hex');
      expect(verifyChain(h, i, chain.commitment)).toBe(true);
      expect(verifyLink(h, chain.hashAt(i - 1).toString('hex'))).toBe(true);
    }
  });

  it('fails for a tampered hash, a wrong index, a wrong commitment or a non-neighbour', () => {
    const h5 = chain.hashAt(5).toString('hex');
    expect(verifyChain(tamper(h5), 5, chain.commitment)).toBe(false);
    expect(verifyChain(h5, 4, chain.commitment)).toBe(false);
    expect(verifyChain(h5, 5, tamper(chain.commitment))).toBe(false);
    expect(verifyLink(h5, chain.hashAt(3).toString('hex'))).toBe(false);
    expect(verifyLink(tamper(h5), chain.hashAt(4).toString('hex'))).toBe(false);
  });

  it('accepts upper-case hex and rejects malformed input with a clear error', () => {
    expect(verifyChain(chain.hashAt(2).toString('hex').toUpperCase(), 2, chain.commitment)).toBe(true);
    expect(() => verifyChain('abc', 1, chain.commitment)).toThrow(/hash must be 64 hex characters/);
    expect(() => verifyChain(chain.hashAt(1).toString('hex'), 1, 'zz'.repeat(32))).toThrow(/commitment/);
    expect(() => verifyChain(chain.hashAt(1).toString('hex'), 0, chain.commitment)).toThrow(/index/);
    expect(() => parseHash('g'.repeat(64))).toThrow(FairnessInputError);
  });

  it('derives the round bytes from the revealed hash and the public salt', () => {
    const h = chain.hashAt(1);
    const a = roundHmac(h, 'wall-street', chain.commitment);
    expect(a).toHaveLength(32);
    expect(roundHmac(h, 'wall-street', chain.commitment.toUpperCase()).equals(a)).toBe(true);
    expect(roundHmac(h, 'crash', chain.commitment).equals(a)).toBe(false);
    expect(sha256Times(h, 1).equals(chain.hashAt(0))).toBe(true);
  });
});

describe('hmacSha256 and sha256 (one-shot hashes)', () => {
  it('give the bytes of node:crypto createHmac and createHash for every key length', () => {
    for (const keyLen of [0, 1, 31, 32, 63, 64, 65, 100]) {
      const key = Buffer.from(Array.from({ length: keyLen }, (_, i) => (i * 37 + keyLen) & 0xff));
      for (const msg of ['', 'crash:00ff', 'x'.repeat(200)]) {
        const want = createHmac('sha256', key).update(msg).digest();
        expect(hmacSha256(key, msg).equals(want), `key ${keyLen}, msg ${msg.length}`).toBe(true);
        expect(hmacSha256(key, Buffer.from(msg)).equals(want)).toBe(true);
      }
      expect(sha256(key).equals(createHash('sha256').update(key).digest())).toBe(true);
    }
  });
});
