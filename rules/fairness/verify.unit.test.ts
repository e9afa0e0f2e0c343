import { describe, expect, it } from 'vitest';
import { FairnessInputError } from '../errors.ts';
import type { GameSlug } from '../games/catalog.ts';
import { type ChainSource, decide, evolve, initialState } from '../rounds/decider.ts';
import type { RoundFinished } from '../rounds/round.ts';
import { buildChain } from './chain.ts';
import { verifyReveal, verifyRound } from './verify.ts';

const SEED = Buffer.alloc(32);

function chains(n: number): ChainSource {
  return (slug, epoch) => buildChain(SEED, slug, epoch, n, 4);
}

/** `count` consecutive rounds of `slug` as the engine decides them. */
function rounds(slug: GameSlug, count: number, n = 10): RoundFinished[] {
  const src = chains(n);
  let state = initialState(slug);
  const out: RoundFinished[] = [];
  for (let i = 0; i < count; i++) {
    const r = decide(state, src, 1_700_000_000_000 + i);
    out.push(r);
    state = evolve(state, r);
  }
  return out;
}

describe('verifyReveal', () => {
  it('recomputes the results an independent implementation (Python) gives for chain index 3', () => {
    const expected = {
      crash: { game: 'crash', point: '8.64' },
      double: { game: 'double', color: 'black', number: 14 },
      slot: { game: 'slot', reels: ['bar', 'bell', 'bar'], multiplier: '0.00' },
      'wall-street': { game: 'wall-street', trending: 'down' },
    } as const;
    for (const slug of Object.keys(expected) as GameSlug[]) {
      const chain = buildChain(SEED, slug, 0, 10);
      const v = verifyReveal({
        game: slug,
        hash: chain.hashAt(3).toString('hex'),
        index: 3,
        commitment: chain.commitment,
      });
      expect(v).toMatchObject({
        ok: true,
        chainOk: true,
        linkOk: null,
        resultOk: null,
        result: expected[slug],
      });
    }
  });

  it('fails the chain check for a hash that is not in the committed chain', () => {
    const chain = buildChain(SEED, 'crash', 0, 10);
    const other = buildChain(Buffer.alloc(32, 1), 'crash', 0, 10);
    const v = verifyReveal({
      game: 'crash',
      hash: other.hashAt(3).toString('hex'),
      index: 3,
      commitment: chain.commitment,
    });
    expect(v.chainOk).toBe(false);
    expect(v.ok).toBe(false);
  });

  it('rejects an unknown game and malformed input', () => {
    const base = { hash: 'a'.repeat(64), index: 1, commitment: 'b'.repeat(64) };
    expect(() => verifyReveal({ ...base, game: 'poker' })).toThrow(/unknown game "poker"/);
    expect(() => verifyReveal({ ...base, game: 'crash', hash: 'xyz' })).toThrow(FairnessInputError);
    expect(() => verifyReveal({ ...base, game: 'crash', index: -2 })).toThrow(FairnessInputError);
  });
});

describe('verifyReveal: the recorded result', () => {
  it('is equal only when every field is, reels included, and no field is added or missing', () => {
    const chain = buildChain(SEED, 'slot', 0, 10);
    const input = {
      game: 'slot',
      hash: chain.hashAt(3).toString('hex'),
      index: 3,
      commitment: chain.commitment,
    };
    const right = { game: 'slot', reels: ['bar', 'bell', 'bar'], multiplier: '0.00' } as const;
    expect(verifyReveal(input, { ...right, reels: ['bar', 'bell', 'bar'] }).resultOk).toBe(true);
    const wrong = [
      { ...right, reels: ['bar', 'bell', 'seven'] },
      { ...right, reels: ['bar', 'bell'] },
      { ...right, multiplier: '0.01' },
      { ...right, extra: 1 },
      { game: 'slot', reels: ['bar', 'bell', 'bar'] },
      { game: 'slot', reels: ['bar', 'bell', 'bar'], other: '0.00' },
    ];
    for (const w of wrong) expect(verifyReveal(input, w as never).resultOk, JSON.stringify(w)).toBe(false);
  });
});

describe('verifyRound', () => {
  it.each(['crash', 'double', 'slot', 'wall-street'] as const)(
    'passes for every %s round the engine decides, across an epoch boundary',
    (slug) => {
      const rs = rounds(slug, 25);
      rs.forEach((r, i) => {
        const prev = rs[i - 1];
        const samechain = prev && prev.proof?.chain_epoch === r.proof?.chain_epoch;
        const v = verifyRound(r, samechain ? prev : undefined);
        expect(v.ok).toBe(true);
        expect(v.resultOk).toBe(true);
        if (samechain) expect(v.linkOk).toBe(true);
      });
      expect(new Set(rs.map((r) => r.proof?.chain_epoch))).toEqual(new Set([0, 1, 2]));
    },
  );

  it('fails for a tampered result, hash or predecessor', () => {
    const [a, b] = rounds('crash', 2) as [RoundFinished, RoundFinished];
    const forged = { ...b, result: { game: 'crash', point: '1000.00' } } as RoundFinished;
    expect(verifyRound(forged, a)).toMatchObject({ ok: false, resultOk: false, chainOk: true, linkOk: true });
    const proof = b.proof as NonNullable<RoundFinished['proof']>;
    const badHash = { ...b, proof: { ...proof, hash: 'f'.repeat(64) } };
    expect(verifyRound(badHash, a)).toMatchObject({ ok: false, chainOk: false, linkOk: false });
    expect(() => verifyRound(a, b)).toThrow(/not the chain predecessor/);
    expect(() => verifyRound({ ...a, proof: null })).toThrow(/no fairness proof/);
  });
});

describe('verification against a chain anchor', () => {
  it('checks the chain down to an earlier verified hash instead of the commitment', () => {
    const chain = buildChain(SEED, 'slot', 0, 10);
    const at = (i: number) => chain.hashAt(i).toString('hex');
    const input = { game: 'slot', hash: at(7), index: 7, commitment: chain.commitment };
    expect(verifyReveal({ ...input, anchor: { hash: at(4), index: 4 } })).toMatchObject({
      ok: true,
      chainOk: true,
    });
    expect(verifyReveal({ ...input, anchor: { hash: at(6), index: 6 } }).chainOk).toBe(true);
    // A hash of another position, or an anchor that is not the chain's, fails.
    expect(verifyReveal({ ...input, hash: at(8), anchor: { hash: at(4), index: 4 } }).chainOk).toBe(false);
    expect(verifyReveal({ ...input, anchor: { hash: 'e'.repeat(64), index: 4 } }).chainOk).toBe(false);
    const [, , c] = rounds('slot', 3) as [RoundFinished, RoundFinished, RoundFinished];
    const a = rounds('slot', 1)[0] as RoundFinished;
    expect(verifyRound(c, undefined, { hash: a.proof?.hash as string, index: 1 }).ok).toBe(true);
  });

  it('refuses an anchor at or above the index', () => {
    const chain = buildChain(SEED, 'crash', 0, 10);
    const input = {
      game: 'crash',
      hash: chain.hashAt(3).toString('hex'),
      index: 3,
      commitment: chain.commitment,
    };
    expect(() => verifyReveal({ ...input, anchor: { hash: input.hash, index: 3 } })).toThrow(
      FairnessInputError,
    );
    expect(() => verifyReveal({ ...input, anchor: { hash: input.hash, index: 0 } })).toThrow(
      /anchor index 0/,
    );
  });
});
