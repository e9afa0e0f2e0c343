import { describe, expect, it } from 'vitest';
import { type GameInfo, gameBySlug } from '../games/catalog.ts';
import { evolvePhase, type Phase } from './lifecycle.ts';
import { decideFinish, decideOpen, dueClose, nextRoundId, sealRound } from './publishing.ts';
import type { RoundResult } from './round.ts';

const slot = gameBySlug('slot') as GameInfo;
const SEED = 'ab'.repeat(32);
const OTHER = 'cd'.repeat(32);
const T0 = 1_800_000_000_000;
const FIRST = 3e12 + 1;

function opened(roundId = FIRST, seed = SEED, bettingMs = 5000): Phase {
  const r = decideOpen(
    slot,
    undefined,
    { round_id: roundId, betting_ms: bettingMs, commitment: sealRound('slot', seed).commitment },
    T0,
  );
  if (!r.ok) throw new Error(r.refusal.message);
  return evolvePhase(undefined, r.value) as Phase;
}

const finish = (
  phase: Phase | undefined,
  over: Partial<{ round_id: number; finished_at: number; result: RoundResult; seed: string }> = {},
  now = T0 + 6000,
) =>
  decideFinish(
    slot,
    phase,
    { round_id: FIRST, finished_at: now, result: sealRound('slot', SEED).result, seed: SEED, ...over },
    now,
    5000,
  );

describe('external rounds: open', () => {
  it('opens the first round of a game at game_id × 10^12 + 1 with the platform clock and the commitment', () => {
    const r = decideOpen(
      slot,
      undefined,
      { round_id: FIRST, betting_ms: 5000, commitment: 'a'.repeat(64) },
      T0,
    );
    expect(r).toEqual({
      ok: true,
      value: expect.objectContaining({
        type: 'RoundOpened',
        round_id: FIRST,
        betting_opens_at: T0,
        betting_closes_at: T0 + 5000,
        commitment: 'a'.repeat(64),
        chain_index: 1,
      }),
    });
  });

  it('refuses any id but the next, and a second open while a round is open', () => {
    expect(
      decideOpen(slot, undefined, { round_id: FIRST + 4, betting_ms: 5000, commitment: 'a'.repeat(64) }, T0),
    ).toMatchObject({
      ok: false,
      refusal: { status: 409, code: 'ROUND_NOT_NEXT', field: 'round_id' },
    });
    const phase = opened();
    expect(
      decideOpen(slot, phase, { round_id: FIRST + 1, betting_ms: 5000, commitment: 'a'.repeat(64) }, T0 + 1),
    ).toMatchObject({
      ok: false,
      refusal: { code: 'ROUND_STILL_OPEN' },
    });
    const finished: Phase = { phase: 'finished', roundId: FIRST + 9, finishedAt: T0 };
    expect(nextRoundId(slot, finished)).toBe(FIRST + 10);
  });
});

describe('external rounds: finish', () => {
  it('accepts the open round after its window with the seed of its commitment: BettingClosed at the announced close, then the round with its proof', () => {
    const r = finish(opened());
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.value.map((e) => e.type)).toEqual(['BettingClosed', 'RoundFinished']);
    expect(r.value[0]).toMatchObject({ at: T0 + 5000 });
    expect(r.value[1]).toMatchObject({
      round_id: FIRST,
      result: sealRound('slot', SEED).result,
      proof: { hash: SEED, chain_index: 1, commitment: sealRound('slot', SEED).commitment },
    });
  });

  it('adds no second BettingClosed when the log has one', () => {
    const closed = evolvePhase(opened(), dueClose(opened(), T0 + 5000) as never) as Phase;
    expect(closed.phase).toBe('running');
    const r = finish(closed);
    expect(r.ok && r.value.map((e) => e.type)).toEqual(['RoundFinished']);
  });

  it('refuses while betting is open, a round that is not the open one, and with no round open', () => {
    expect(finish(opened(), {}, T0 + 4999)).toMatchObject({
      ok: false,
      refusal: { status: 409, code: 'BETTING_STILL_OPEN' },
    });
    expect(finish(opened(), { round_id: FIRST + 4 })).toMatchObject({
      ok: false,
      refusal: { status: 409, code: 'ROUND_NOT_OPEN' },
    });
    expect(finish(undefined)).toMatchObject({ ok: false, refusal: { code: 'ROUND_NOT_OPEN' } });
    expect(finish({ phase: 'finished', roundId: FIRST, finishedAt: T0 })).toMatchObject({
      ok: false,
      refusal: { code: 'ROUND_NOT_OPEN' },
    });
  });

  it('refuses a finished_at from the future, from the past, or before betting closed', () => {
    const now = T0 + 60_000;
    expect(finish(opened(), { finished_at: now + 5001 }, now)).toMatchObject({
      ok: false,
      refusal: { status: 400, field: 'finished_at' },
    });
    expect(finish(opened(), { finished_at: now - 5001 }, now)).toMatchObject({
      ok: false,
      refusal: { field: 'finished_at' },
    });
    expect(finish(opened(), { finished_at: T0 + 4000 }, T0 + 6000)).toMatchObject({
      ok: false,
      refusal: { field: 'finished_at' },
    });
    expect(finish(opened(), { finished_at: now + 5000 }, now).ok).toBe(true);
  });

  it('refuses a seed that is not the commitment, and a result the seed does not give', () => {
    expect(finish(opened(), { seed: OTHER, result: sealRound('slot', OTHER).result })).toMatchObject({
      ok: false,
      refusal: { code: 'SEED_MISMATCH', field: 'seed' },
    });
    expect(finish(opened(), { seed: 'zz' })).toMatchObject({ ok: false, refusal: { code: 'SEED_MISMATCH' } });
    const other = sealRound('slot', OTHER).result;
    expect(other).not.toEqual(sealRound('slot', SEED).result);
    expect(finish(opened(), { result: other })).toMatchObject({
      ok: false,
      refusal: { status: 400, code: 'RESULT_MISMATCH', field: 'result' },
    });
  });
});
