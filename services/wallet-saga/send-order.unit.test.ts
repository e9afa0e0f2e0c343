/**
 * SendOrder (send-order.ts): answers released in the order their requests were sent, per key; fast
 * failures that overtake slow successes are not a run of failures once put back in order.
 */
import { describe, expect, it } from 'vitest';
import { afterBetAnswer, type BreakerState, CLOSED } from '../../rules/wallet/breaker.ts';
import { SendOrder } from './send-order.ts';

describe('SendOrder', () => {
  it('releases answers in send order, per key, skipping requests that ended without one', () => {
    const out: string[] = [];
    const o = new SendOrder<string>((key, v) => out.push(`${key}:${v}`));
    const a = [o.sent('op-a'), o.sent('op-a'), o.sent('op-a'), o.sent('op-a')];
    const b = o.sent('op-b');
    expect(a).toEqual([0, 1, 2, 3]);
    expect(b).toBe(0);

    o.answered('op-a', 2, 'third');
    o.answered('op-a', 3, 'fourth');
    expect(out).toEqual([]);
    expect(o.held).toBe(2);
    o.answered('op-b', b, 'only'); // another key is not held behind op-a
    expect(out).toEqual(['op-b:only']);
    o.answered('op-a', 1, null); // ended without an answer: nothing to release, but no longer waited for
    expect(out).toEqual(['op-b:only']);
    o.answered('op-a', 0, 'first');
    expect(out).toEqual(['op-b:only', 'op-a:first', 'op-a:third', 'op-a:fourth']);
    expect(o.held).toBe(0);
  });

  it('keeps fast failures that overtook slow successes from opening the breaker', () => {
    const cfg = { failures: 5, cooldownMs: 5_000, maxCooldownMs: 60_000 };
    // 10 bets sent at once; successes (even) and failures (odd) alternate in send order, but the
    // five failures come back first.
    const run = (order: 'answers' | 'sends') => {
      let s: BreakerState = CLOSED;
      const o = new SendOrder<'ok' | 'failed'>((_k, v) => {
        s = afterBetAnswer(s, v, null, 0, cfg);
      });
      const seqs = Array.from({ length: 10 }, () => o.sent('op'));
      const arrivals = [...seqs.filter((n) => n % 2 === 1), ...seqs.filter((n) => n % 2 === 0)];
      for (const n of arrivals) {
        const v = n % 2 === 1 ? 'failed' : 'ok';
        if (order === 'sends') o.answered('op', n, v);
        else s = afterBetAnswer(s, v, null, 0, cfg);
      }
      return s.state;
    };
    expect(run('answers')).toBe('open');
    expect(run('sends')).toBe('closed');
  });

  it('still opens on failures that are consecutive in send order', () => {
    const cfg = { failures: 3, cooldownMs: 5_000, maxCooldownMs: 60_000 };
    let s: BreakerState = CLOSED;
    const o = new SendOrder<'ok' | 'failed'>((_k, v) => {
      s = afterBetAnswer(s, v, null, 0, cfg);
    });
    const [ok, f1, f2, f3] = [o.sent('op'), o.sent('op'), o.sent('op'), o.sent('op')];
    o.answered('op', f3 as number, 'failed');
    o.answered('op', f1 as number, 'failed');
    o.answered('op', f2 as number, 'failed');
    expect(s.state).toBe('closed'); // the first request is still out
    o.answered('op', ok as number, 'ok');
    expect(s.state).toBe('open');
  });
});
