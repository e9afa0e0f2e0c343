import { describe, expect, it } from 'vitest';
import { afterBetAnswer, afterProbe, type BreakerConfig, CLOSED, probeDue, refusesBets } from './breaker.ts';

const cfg: BreakerConfig = { failures: 3, cooldownMs: 5_000, maxCooldownMs: 20_000 };

describe('circuit breaker', () => {
  it('opens after N consecutive failed bet callbacks; a success in between resets the count', () => {
    let s = CLOSED;
    s = afterBetAnswer(s, 'failed', 'e1', 1, cfg);
    s = afterBetAnswer(s, 'failed', 'e2', 2, cfg);
    s = afterBetAnswer(s, 'ok', null, 3, cfg);
    expect(s).toBe(CLOSED);
    for (const t of [4, 5]) s = afterBetAnswer(s, 'failed', 'e', t, cfg);
    expect(s.state).toBe('closed');
    s = afterBetAnswer(s, 'failed', 'last', 6, cfg);
    expect(s).toEqual({ state: 'open', failures: 0, openedAt: 6, retryAt: 5_006, lastError: 'last' });
  });

  it('refuses bets while open with the time to the probe; only a successful probe closes it', () => {
    const open = afterBetAnswer(
      afterBetAnswer(afterBetAnswer(CLOSED, 'failed', 'e', 0, cfg), 'failed', 'e', 0, cfg),
      'failed',
      'e',
      0,
      cfg,
    );
    expect(refusesBets(open, 1_000)).toEqual({ refused: true, retryAfterS: 4 });
    expect(refusesBets(open, 9_000)).toEqual({ refused: true, retryAfterS: 1 });
    expect(afterBetAnswer(open, 'ok', null, 100, cfg)).toBe(open);
    expect(probeDue(open, 4_999)).toBe(false);
    expect(probeDue(open, 5_000)).toBe(true);
    const stillOpen = afterProbe(open, false, 'down', 5_000, cfg);
    expect(stillOpen).toMatchObject({ state: 'open', failures: 1, openedAt: 0, retryAt: 15_000 });
    const longer = afterProbe(afterProbe(stillOpen, false, 'down', 15_000, cfg), false, 'down', 35_000, cfg);
    expect(longer.retryAt).toBe(55_000); // capped at maxCooldownMs
    expect(afterProbe(longer, true, null, 60_000, cfg)).toBe(CLOSED);
    expect(refusesBets(CLOSED, 0)).toEqual({ refused: false });
  });

  it('a failed probe of a closed breaker opens it', () => {
    expect(afterProbe(CLOSED, false, 'down', 10, cfg)).toMatchObject({ state: 'open', retryAt: 5_010 });
  });
});
