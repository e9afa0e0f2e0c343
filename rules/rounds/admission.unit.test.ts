import { describe, expect, it } from 'vitest';
import { admitByTime, FUTURE_SKEW_MS, PAST_LIMIT_MS, RoundLedger } from './admission.ts';
import { sampleRound } from './samples.ts';

const AT = Date.UTC(2026, 10, 28, 12);
const slot = (seq: number, finishedAt = AT - 10) => sampleRound('slot', seq, finishedAt);

describe('admitByTime', () => {
  it('admits a round finished before its append, up to the past limit, and up to the skew after it', () => {
    for (const f of [AT - 10, AT, AT + FUTURE_SKEW_MS, AT - PAST_LIMIT_MS, Date.UTC(2025, 0, 1)])
      expect(admitByTime({ finished_at: f }, AT)).toEqual({ admitted: true });
  });

  it('refuses a round from the future (10 minutes ahead, 9999-12-31) with the reason and both times', () => {
    const tenMinutes = admitByTime({ finished_at: AT + 600_000 }, AT);
    expect(tenMinutes).toMatchObject({ admitted: false, reason: 'future' });
    expect(tenMinutes.admitted ? '' : tenMinutes.detail).toContain('2026-11-28T12:10:00.000Z');
    expect(admitByTime({ finished_at: AT + FUTURE_SKEW_MS + 1 }, AT)).toMatchObject({ reason: 'future' });
    expect(admitByTime({ finished_at: Date.parse('9999-12-31T00:00:00Z') }, AT)).toMatchObject({
      reason: 'future',
    });
  });

  it('refuses a round from the past (0000-01-01, the Unix epoch, not a number)', () => {
    for (const f of [Date.parse('0000-01-01T00:00:00Z'), 0, AT - PAST_LIMIT_MS - 1, Number.NaN])
      expect(admitByTime({ finished_at: f }, AT)).toMatchObject({ admitted: false, reason: 'past' });
  });
});

describe('RoundLedger', () => {
  it('tells a duplicate (same content) from a conflict (other content): the first one stays', () => {
    const ledger = new RoundLedger();
    expect(ledger.admit(slot(5), AT)).toEqual({ admitted: true });
    expect(ledger.admit(slot(5), AT + 3)).toMatchObject({ admitted: false, reason: 'duplicate' });
    const other = { ...slot(5), result: { game: 'slot', reels: ['x'], multiplier: '99.00' } } as const;
    expect(ledger.admit(other, AT + 4)).toMatchObject({ admitted: false, reason: 'conflict' });
    expect(ledger.admit(slot(5), AT + 5)).toMatchObject({ reason: 'duplicate' });
  });

  it('admits a lower round id after a higher one (deduplicated by id, not by a high-water mark)', () => {
    const ledger = new RoundLedger();
    expect(ledger.admit(slot(9), AT)).toEqual({ admitted: true });
    for (const seq of [6, 7, 8]) expect(ledger.admit(slot(seq), AT + seq)).toEqual({ admitted: true });
    expect(ledger.admit(slot(10), AT + 10)).toEqual({ admitted: true });
  });

  it('refuses by time before identity: a refused round does not take its id from a later good one', () => {
    const ledger = new RoundLedger();
    expect(ledger.admit(slot(4, AT + 600_000), AT)).toMatchObject({ reason: 'future' });
    expect(ledger.admit(slot(4), AT + 1)).toEqual({ admitted: true });
  });

  it('forgets the oldest ids past its capacity, per game', () => {
    const ledger = new RoundLedger(2);
    for (const seq of [1, 2, 3]) ledger.admit(slot(seq), AT);
    ledger.admit(sampleRound('crash', 1, AT - 10), AT);
    const ids = [1, 2, 3].map((seq) => slot(seq).round_id);
    expect(ids.map((id) => ledger.has('slot', id))).toEqual([false, true, true]);
    expect(ledger.has('crash', sampleRound('crash', 1, AT).round_id)).toBe(true);
    expect(ledger.admit(slot(1), AT)).toEqual({ admitted: true });
  });
});
