import { describe, expect, it } from 'vitest';
import { bettingClosedWait } from './bots.ts';

const closed = (opens: string | null) =>
  JSON.stringify({ status: 409, code: 'BETTING_CLOSED', next_round_opens_at: opens, detail: 'x' });

describe('a bot told that betting is closed', () => {
  it('waits until the next window opens, a little after', () => {
    const now = Date.parse('2026-11-25T10:00:00.000Z');
    expect(
      bettingClosedWait({ status: 409, message: closed('2026-11-25T10:00:02.000Z') }, now, () => 0),
    ).toBe(2050);
    expect(
      bettingClosedWait({ status: 409, message: closed('2026-11-25T10:00:02.000Z') }, now, () => 1),
    ).toBe(2550);
    // Already open by its clock: only the jitter.
    expect(
      bettingClosedWait({ status: 409, message: closed('2026-11-25T09:59:59.000Z') }, now, () => 0),
    ).toBe(50);
  });

  it('polls every 500 ms during a crash flight (no opening time can be told)', () => {
    expect(bettingClosedWait({ status: 409, message: closed(null) }, 0, () => 0)).toBe(500);
  });

  it('leaves every other refusal to the usual handling', () => {
    expect(
      bettingClosedWait({ status: 409, message: JSON.stringify({ code: 'NO_FREE_BET' }) }, 0, () => 0),
    ).toBeUndefined();
    expect(bettingClosedWait({ status: 400, message: closed(null) }, 0, () => 0)).toBeUndefined();
    expect(bettingClosedWait({ status: 409, message: 'not json' }, 0, () => 0)).toBeUndefined();
  });
});
