import { describe, expect, it } from 'vitest';
import { FairnessInputError } from '../errors.ts';
import { buildChain, sha256 } from '../fairness/chain.ts';
import { GAME_SLUGS, type GameSlug } from '../games/catalog.ts';
import {
  type ChainSource,
  decide,
  evolve,
  finish,
  initialState,
  nextPosition,
  nextRound,
  ROUND_ID_BASE,
  sequenceOf,
} from './decider.ts';

const SEED = Buffer.alloc(32, 7);
const N = 5;
const chains: ChainSource = (slug, epoch) => buildChain(SEED, slug, epoch, N, 2);

function run(slug: GameSlug, count: number, from = initialState(slug), source = chains) {
  let state = from;
  const out = [];
  for (let i = 0; i < count; i++) {
    const r = decide(state, source, 1000 + i);
    out.push(r);
    state = evolve(state, r);
  }
  return { rounds: out, state };
}

describe('decide', () => {
  it('starts a game at sequence 1, epoch 0, chain index 1, revealing h_1', () => {
    const r = decide(initialState('crash'), chains, 1234);
    expect(r).toMatchObject({
      type: 'RoundFinished',
      round_id: ROUND_ID_BASE + 1,
      game_id: 1,
      game_slug: 'crash',
      game_type: 'multiplier',
      finished_at: 1234,
    });
    expect(r.proof).toEqual({
      hash: chains('crash', 0).hashAt(1).toString('hex'),
      chain_epoch: 0,
      chain_index: 1,
      commitment: chains('crash', 0).commitment,
    });
  });

  it('increases round ids within a game and keeps them unique across games', () => {
    const all = GAME_SLUGS.flatMap((slug) => {
      const ids = run(slug, 12).rounds.map((r) => r.round_id);
      for (let i = 1; i < ids.length; i++) expect(ids[i]).toBe((ids[i - 1] as number) + 1);
      return ids;
    });
    expect(new Set(all).size).toBe(all.length);
  });

  it('walks the chain forward, each hash hashing to the previous one, and starts a new epoch after N', () => {
    const { rounds } = run('double', 2 * N + 1);
    expect(rounds.map((r) => [r.proof?.chain_epoch, r.proof?.chain_index])).toEqual([
      [0, 1],
      [0, 2],
      [0, 3],
      [0, 4],
      [0, 5],
      [1, 1],
      [1, 2],
      [1, 3],
      [1, 4],
      [1, 5],
      [2, 1],
    ]);
    for (let i = 1; i < rounds.length; i++) {
      const [prev, cur] = [rounds[i - 1]?.proof, rounds[i]?.proof];
      if (prev?.chain_epoch === cur?.chain_epoch)
        expect(sha256(Buffer.from(cur?.hash ?? '', 'hex')).toString('hex')).toBe(prev?.hash);
      else expect(cur?.commitment).not.toBe(prev?.commitment);
    }
  });

  it('continues exactly where the recovered state left off (same rounds as an uninterrupted run)', () => {
    const whole = run('slot', 8).rounds;
    const first = run('slot', 3);
    const recovered = evolve(initialState('slot'), first.rounds[2] as (typeof whole)[number]);
    const rest = run('slot', 5, recovered).rounds;
    expect([...first.rounds, ...rest].map((r) => r.proof)).toEqual(whole.map((r) => r.proof));
    expect([...first.rounds, ...rest].map((r) => r.round_id)).toEqual(whole.map((r) => r.round_id));
  });

  it('starts a new epoch when the recorded commitment is not the current chain (seed or length changed)', () => {
    const { state } = run('wall-street', 2);
    const otherSeed: ChainSource = (slug, epoch) => buildChain(Buffer.alloc(32, 9), slug, epoch, N, 2);
    expect(nextPosition(state, otherSeed)).toEqual({ epoch: 1, index: 1 });
    const longer: ChainSource = (slug, epoch) => buildChain(SEED, slug, epoch, N + 3, 2);
    expect(nextPosition(state, longer)).toEqual({ epoch: 1, index: 1 });
    expect(nextPosition(state, chains)).toEqual({ epoch: 0, index: 3 });
  });

  it('is deterministic: the same state gives the same round', () => {
    const s = run('crash', 3).state;
    expect(decide(s, chains, 5)).toEqual(decide(s, chains, 5));
    const pending = nextRound(s, chains);
    expect(finish(pending, 9).finished_at).toBe(9);
    expect(pending.resultMs).toBeGreaterThanOrEqual(0);
  });
});

describe('evolve', () => {
  it('folds sequence and chain position; a round without proof advances only the sequence', () => {
    const r = decide(initialState('crash'), chains, 1);
    const s = evolve(initialState('crash'), r);
    expect(s).toEqual({ slug: 'crash', sequence: 1, epoch: 0, index: 1, commitment: r.proof?.commitment });
    const external = { ...r, round_id: ROUND_ID_BASE + 9, proof: null };
    expect(evolve(s, external)).toEqual({ ...s, sequence: 9 });
  });

  it('rejects a round of another game or a round id outside the game', () => {
    const r = decide(initialState('crash'), chains, 1);
    expect(() => evolve(initialState('double'), r)).toThrow(FairnessInputError);
    expect(() => sequenceOf('double', r.round_id)).toThrow(/does not belong to double/);
    expect(() => sequenceOf('crash', ROUND_ID_BASE)).toThrow(FairnessInputError);
  });
});
