import { describe, expect, it } from 'vitest';
import type { RoundFinished } from '../../rules/rounds/round.ts';
import { chainSource, RoundMaker } from '../../tests/support/analytics.ts';
import { MAX_LISTED, ProofChecker } from './proofs.ts';

const SEED = Buffer.alloc(32, 7);

function check(rounds: readonly RoundFinished[]) {
  const c = new ProofChecker();
  const verdicts = rounds.map((r, i) => c.check(r, { partition: 0, offset: String(i) }));
  return { verdicts, summary: c.summary() };
}

/** The same round with its proof changed. */
function withProof(r: RoundFinished, change: Partial<NonNullable<RoundFinished['proof']>>): RoundFinished {
  return { ...r, proof: { ...(r.proof as NonNullable<RoundFinished['proof']>), ...change } };
}

describe('proof checker', () => {
  it('passes every genuine round, across chain epochs, for all four games', () => {
    // Chains of 5 rounds: 40 rounds per game cross 8 epochs.
    const rounds = new RoundMaker(['crash', 'double', 'slot', 'wall-street'], chainSource(SEED, 5)).next(160);
    const { verdicts, summary } = check(rounds);
    expect(verdicts.every((v) => v === true)).toBe(true);
    expect(summary).toMatchObject({ checked: 160, passed: 160, failed: 0, unproven: 0, failures: [] });
  });

  it('passes a range that starts in the middle of a chain (hashes down to the commitment once)', () => {
    const rounds = new RoundMaker(['crash'], chainSource(SEED, 1000)).next(600);
    expect(check(rounds.slice(450)).summary).toMatchObject({ checked: 150, failed: 0 });
  });

  it('fails a tampered result, hash, commitment or index, naming the check, and keeps checking after it', () => {
    const rounds = new RoundMaker(['double'], chainSource(SEED, 50)).next(12);
    const r = (i: number) => rounds[i] as RoundFinished;
    const res = r(3).result;
    const forgedNumber = res.game === 'double' && res.number === 0 ? 1 : 0;
    const forged = [...rounds];
    forged[3] = {
      ...r(3),
      result: { game: 'double', color: forgedNumber === 0 ? 'white' : 'red', number: forgedNumber },
    };
    forged[5] = withProof(r(5), {
      hash: String(r(5).proof?.hash).replace(/^./, (c) => (c === '0' ? '1' : '0')),
    });
    forged[7] = withProof(r(7), { commitment: 'ab'.repeat(32) });
    forged[9] = withProof(r(9), { chain_index: (r(9).proof?.chain_index as number) + 1 });
    const { verdicts, summary } = check(forged);
    expect(verdicts).toEqual([true, true, true, false, true, false, true, false, true, false, true, true]);
    expect(summary.failed).toBe(4);
    expect(summary.failures.map((f) => [f.round_id, f.reason])).toEqual([
      [r(3).round_id, 'result'],
      [r(5).round_id, 'chain+result'],
      [r(7).round_id, 'chain+result'],
      [r(9).round_id, 'chain'], // same hash and commitment: the result still matches
    ]);
    expect(summary.failures[0]).toMatchObject({ game: 'double', partition: 0, offset: '3' });
  });

  it('counts rounds without a proof apart, and fails a malformed proof with the reason', () => {
    const rounds = new RoundMaker(['slot'], chainSource(SEED, 50)).next(3);
    const { verdicts, summary } = check([
      { ...(rounds[0] as RoundFinished), proof: null },
      withProof(rounds[1] as RoundFinished, { hash: 'not-hex' }),
      rounds[2] as RoundFinished,
    ]);
    expect(verdicts).toEqual([null, false, true]);
    expect(summary).toMatchObject({ checked: 2, passed: 1, failed: 1, unproven: 1 });
    expect(summary.unproven_round_ids).toEqual([rounds[0]?.round_id]);
    expect(summary.failures[0]?.reason).toMatch(/64 hex/);
  });

  it(`lists at most ${MAX_LISTED} failures while counting all`, () => {
    const [genuine] = new RoundMaker(['crash'], chainSource(SEED, 50)).next(1);
    const bad = withProof(genuine as RoundFinished, { commitment: 'cd'.repeat(32) });
    const c = new ProofChecker();
    for (let i = 0; i < MAX_LISTED + 5; i++) c.check(bad, { partition: 1, offset: String(i) });
    expect(c.summary().failed).toBe(MAX_LISTED + 5);
    expect(c.summary().failures).toHaveLength(MAX_LISTED);
  });
});
