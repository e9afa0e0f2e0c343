/**
 * The bet process manager's invariants (docs/architecture.md "Money rules"), one test each,
 * then all of them over random event orders, repeats and adversarial events.
 */
import { describe, expect, it } from 'vitest';
import * as settlement from '../bets/settle.ts';
import type { BetContext, WalletEvent } from './events.ts';
import { type BetProcess, type Command, evolve, finished, step } from './process.ts';

const TX = 400;
const bet: BetContext = {
  session_id: '00000000-0000-4000-8000-000000000001',
  operator_id: 'op1',
  user_id: 'u1',
  currency: 'EUR',
  game: 'double',
  round_id: 7,
  amount_minor: 1000,
  mode: 'default',
  bonus_code: null,
  free_bet_id: null,
  count_register: 1,
  demo: false,
};
const placed = (b: BetContext = bet): WalletEvent => ({
  type: 'BetPlaced',
  value: { tx_id: TX, bet: b, selection: { 'casino.wallet.DoubleBet': { color: 'red' } }, placed_at: 1 },
});
const ok = (kind: 'bet' | 'win' | 'rollback' | 'close', answer = 'ok'): WalletEvent => ({
  type: 'CallbackSucceeded',
  value: {
    tx_id: TX + (kind === 'bet' ? 0 : kind === 'rollback' ? 2 : 1),
    bet_tx_id: TX,
    kind,
    operator_tx_id: 'o',
    old_balance: '1.00',
    new_balance: '1.00',
    amount_minor: 1000,
    answer,
    attempts: 1,
    at: 2,
  },
});
const failed = (
  kind: 'bet' | 'win' | 'rollback' | 'close',
  answer: 'failed' | 'refused' | 'mismatch',
  parked = false,
  code = 'OPERATOR_ERROR',
): WalletEvent => ({
  type: 'CallbackFailed',
  value: {
    tx_id: TX + (kind === 'bet' ? 0 : kind === 'rollback' ? 2 : 1),
    bet_tx_id: TX,
    kind,
    attempts: 1,
    error: 'x',
    answer,
    code,
    parked,
    next_attempt_at: null,
    at: 2,
  },
});
const settled = (outcome: 'won' | 'lost', payout = outcome === 'won' ? 2000 : 0): WalletEvent => ({
  type: 'BetSettled',
  value: {
    tx_id: TX,
    bet,
    outcome,
    payout_minor: payout,
    win_tx_id: outcome === 'won' ? TX + 1 : null,
    at: 3,
  },
});
const rollbackRequested: WalletEvent = {
  type: 'RollbackRequested',
  value: { tx_id: TX + 2, linked_tx_id: TX, bet, reason: 'r', at: 3 },
};
const rejected = (code: string): WalletEvent => ({
  type: 'BetRejected',
  value: { tx_id: TX, code, reason: 'r', at: 3 },
});

/** Runs events through step; the commands in order and the final state. */
function run(events: readonly WalletEvent[]): {
  commands: Command[];
  state: BetProcess | undefined;
  violations: string[];
} {
  let s: BetProcess | undefined;
  const commands: Command[] = [];
  const violations: string[] = [];
  for (const e of events) {
    const r = step(s, e, 10);
    commands.push(...r.decision.commands);
    if (r.decision.violation) violations.push(r.decision.violation);
    s = r.state;
  }
  return { commands, state: s, violations };
}
const callbacks = (cs: readonly Command[]) => cs.flatMap((c) => (c.type === 'callback' ? [c.job.kind] : []));
const appended = (cs: readonly Command[]) =>
  cs.flatMap((c) =>
    c.type === 'append'
      ? [`${c.event.type}${c.event.type === 'BetRejected' ? `:${c.event.value.code}` : ''}`]
      : [],
  );

describe('the happy paths', () => {
  it('placed → debit → won → credited: one bet callback, one win callback', () => {
    const r = run([placed(), ok('bet'), settled('won'), ok('win')]);
    expect(callbacks(r.commands)).toEqual(['bet', 'win']);
    expect(r.commands[1]).toMatchObject({ job: { kind: 'win', txId: TX + 1, amountMinor: 2000 } });
    expect(r.state).toMatchObject({ debit: 'confirmed', outcome: 'won', win: 'done' });
    expect(finished(r.state as BetProcess)).toBe(true);
  });

  it('a lost bet closes its round for the operator (zero-amount win id)', () => {
    const r = run([placed(), ok('bet'), settled('lost'), ok('close')]);
    expect(callbacks(r.commands)).toEqual(['bet', 'close']);
    expect(r.commands[1]).toMatchObject({ job: { kind: 'close', txId: TX + 1, amountMinor: 0 } });
    expect(r.state).toMatchObject({ outcome: 'lost', close: 'done' });
  });

  it('demo bets have no process', () => {
    expect(run([placed({ ...bet, demo: true }), settled('won')]).commands).toEqual([]);
  });

  it('a free bet is registered as a bet that moves no money; its win waits for the registration', () => {
    const free = { ...bet, mode: 'free' as const, bonus_code: 'B1', free_bet_id: '7' };
    const early = run([placed(free), settled('won')]);
    expect(early.commands).toMatchObject([{ job: { kind: 'bet', amountMinor: 0 } }]);
    expect(early.violations).toHaveLength(1);
    const won = run([placed(free), ok('bet'), settled('won')]);
    expect(won.commands).toMatchObject([
      { job: { kind: 'bet', amountMinor: 0 } },
      { job: { kind: 'win', txId: TX + 1, amountMinor: 2000 } },
    ]);
    expect(callbacks(run([placed(free), ok('bet'), settled('lost')]).commands)).toEqual(['bet', 'close']);
    // A refused registration: rejected, nothing to roll back; a failed one is rolled back for 0.
    expect(appended(run([placed(free), failed('bet', 'refused', false, 'PLAYER_BLOCKED')]).commands)).toEqual(
      ['BetRejected:PLAYER_BLOCKED'],
    );
    expect(run([placed(free), failed('bet', 'failed')]).commands).toMatchObject([
      { job: { kind: 'bet' } },
      { event: { type: 'BetRejected' } },
      { event: { type: 'RollbackRequested' } },
      { job: { kind: 'rollback', amountMinor: 0 } },
    ]);
  });
});

describe('answers to the debit', () => {
  it('a refusal rejects the bet with the refusal code and asks no rollback', () => {
    const r = run([placed(), failed('bet', 'refused', false, 'INSUFFICIENT_FUNDS')]);
    expect(appended(r.commands)).toEqual(['BetRejected:INSUFFICIENT_FUNDS']);
    expect(callbacks(r.commands)).toEqual(['bet']);
  });

  it('a failure (unknown outcome) rejects the bet and rolls the debit back', () => {
    const r = run([placed(), failed('bet', 'failed', false, 'TIMEOUT')]);
    expect(appended(r.commands)).toEqual(['BetRejected:TIMEOUT', 'RollbackRequested']);
    expect(callbacks(r.commands)).toEqual(['bet', 'rollback']);
  });

  it('a mismatching duplicate rejects the bet for ops, guessing neither way', () => {
    const r = run([placed(), failed('bet', 'mismatch', true, 'IDEMPOTENCY_CONFLICT')]);
    expect(appended(r.commands)).toEqual(['BetRejected:DUPLICATE_MISMATCH']);
    expect(callbacks(r.commands)).toEqual(['bet']);
  });

  it('a debit confirmed after the bet was given up is rolled back', () => {
    const r = run([
      placed(),
      failed('bet', 'refused', false, 'PLAYER_BLOCKED'),
      rejected('PLAYER_BLOCKED'),
      ok('bet'),
    ]);
    expect(appended(r.commands)).toEqual(['BetRejected:PLAYER_BLOCKED', 'RollbackRequested']);
    expect(callbacks(r.commands)).toEqual(['bet', 'rollback']);
  });
});

describe('invariants', () => {
  it('a failed re-send of a confirmed debit starts no rollback', () => {
    const r = run([placed(), ok('bet'), failed('bet', 'failed'), settled('won')]);
    expect(appended(r.commands)).toEqual([]);
    expect(callbacks(r.commands)).toEqual(['bet', 'win']);
  });

  it('a rollback decided by the process holds at once: a settlement read before it is read back pays nothing', () => {
    const r = run([placed(), failed('bet', 'failed'), ok('bet'), settled('won')]);
    expect(callbacks(r.commands)).toEqual(['bet', 'rollback']);
    expect(r.violations).toHaveLength(1);
  });

  it('no rollback after a win', () => {
    const r = run([placed(), ok('bet'), settled('won'), rollbackRequested]);
    expect(callbacks(r.commands)).toEqual(['bet', 'win']);
    expect(r.violations).toEqual([expect.stringMatching(/^rollback after a win/)]);
  });

  it('no rollback after a settled loss whose debit was confirmed', () => {
    const r = run([placed(), ok('bet'), settled('lost'), rollbackRequested]);
    expect(callbacks(r.commands)).toEqual(['bet', 'close']);
    expect(r.violations).toHaveLength(1);
  });

  it('at most one credit per bet, whatever is repeated', () => {
    const r = run([
      placed(),
      placed(),
      ok('bet'),
      ok('bet'),
      settled('won'),
      settled('won'),
      ok('win'),
      settled('won'),
    ]);
    expect(callbacks(r.commands)).toEqual(['bet', 'win']);
  });

  it('no win for a rolled-back or rejected bet', () => {
    const a = run([placed(), failed('bet', 'failed'), settled('won')]);
    expect(callbacks(a.commands)).toEqual(['bet', 'rollback']);
    const b = run([placed(), ok('bet'), rejected('ROUND_CLOSED'), settled('won')]);
    expect(callbacks(b.commands)).toEqual(['bet', 'rollback']);
    expect(b.violations).toHaveLength(1);
  });

  it('no payout before the debit is confirmed', () => {
    const r = run([placed(), settled('won'), ok('bet')]);
    expect(callbacks(r.commands)).toEqual(['bet']);
    expect(r.violations).toEqual([expect.stringMatching(/before its debit was confirmed/)]);
  });

  it('a rollback answered "unknown transaction" completes it', () => {
    const r = run([
      placed(),
      failed('bet', 'failed'),
      rollbackRequested,
      ok('rollback', 'unknown_transaction'),
    ]);
    expect(r.state).toMatchObject({ rollback: 'done', outcome: 'rejected' });
    expect(finished(r.state as BetProcess)).toBe(true);
    expect(evolve(r.state, rejected('OPERATOR_ERROR'))).toBe(r.state);
  });
});

/**
 * Decider specs: given the bet's events, when one more arrives, then what the process appends.
 * `given` is folded with `step`, so what the process appended itself is part of its state.
 */
function when(given: readonly WalletEvent[], e: WalletEvent): string[] {
  const { state } = run(given);
  return appended(step(state, e, 10).decision.commands);
}

describe('one owner of the rollback decision, whichever order the debit and the cancellation come in', () => {
  it('given a confirmed debit, when settlement cancels the bet, then the process requests its rollback', () => {
    expect(when([placed(), ok('bet')], rejected('ROUND_CLOSED'))).toEqual(['RollbackRequested']);
    expect(when([placed(), ok('bet')], rejected('INVALID_BET'))).toEqual(['RollbackRequested']);
  });

  it('given a cancellation, when the debit is confirmed, then the process requests its rollback', () => {
    expect(when([placed(), rejected('ROUND_CLOSED')], ok('bet'))).toEqual(['RollbackRequested']);
  });

  it('given its own rollback, when the cancellation or the confirmation is read again, then nothing', () => {
    expect(when([placed(), ok('bet'), rejected('ROUND_CLOSED')], rejected('ROUND_CLOSED'))).toEqual([]);
    expect(when([placed(), rejected('ROUND_CLOSED'), ok('bet')], ok('bet'))).toEqual([]);
    expect(when([placed(), ok('bet'), rejected('ROUND_CLOSED')], ok('bet'))).toEqual([]);
  });

  it('given a win or a settled loss, when a cancellation comes, then no rollback', () => {
    expect(when([placed(), ok('bet'), settled('won')], rejected('ROUND_CLOSED'))).toEqual([]);
    expect(when([placed(), ok('bet'), settled('lost')], rejected('ROUND_CLOSED'))).toEqual([]);
  });

  it("given a pending debit, when the bet is cancelled, then nothing until the debit's outcome is known", () => {
    expect(when([placed()], rejected('ROUND_CLOSED'))).toEqual([]);
    // An unknown outcome is resolved by the rollback (no second BetRejected's rollback after it).
    const r = run([placed(), rejected('ROUND_CLOSED'), failed('bet', 'failed')]);
    expect(appended(r.commands).filter((x) => x === 'RollbackRequested')).toHaveLength(1);
    expect(when([placed(), rejected('ROUND_CLOSED')], failed('bet', 'refused', false, 'X'))).not.toContain(
      'RollbackRequested',
    );
  });

  /**
   * The drill's bet: settlement (rules/bets/settle.ts) and the process read the same partition.
   * Each appends what it decides to the log; both read the whole log in order. Counts every
   * RollbackRequested on the log at the end.
   */
  function rollbacksOnTheLog(debitFirst: boolean): number {
    const log: WalletEvent[] = [placed()];
    // Its BetPlaced was appended at 3, after the round's BettingClosed at 2: settlement cancels it.
    const round = {
      round_id: bet.round_id,
      game_slug: 'double',
      finished_at: 5,
      result: {},
      bettingClosedAt: 2,
    } as unknown as settlement.FinishedRound;
    let sState: settlement.BetState | undefined;
    let pState: BetProcess | undefined;
    let sRead = 0;
    let pRead = 0;
    let finished = false;
    const settle = (out: readonly WalletEvent[]) => {
      for (const e of out) sState = settlement.evolve(sState, e);
      log.push(...out);
    };
    const settlementReads = (upTo: number) => {
      for (; sRead < upTo; sRead++) {
        sState = settlement.evolve(sState, log[sRead] as WalletEvent, 3);
        if (sState) settle(settlement.decide(sState, finished ? round : undefined, 10));
      }
    };
    const roundFinishes = () => {
      finished = true;
      if (sState) settle(settlement.decide(sState, round, 10));
    };
    const processReads = (upTo: number) => {
      for (; pRead < upTo; pRead++) {
        const r = step(pState, log[pRead] as WalletEvent, 10);
        pState = r.state;
        for (const c of r.decision.commands) if (c.type === 'append') log.push(c.event);
      }
    };
    if (debitFirst) {
      log.push(ok('bet'));
      const n = log.length;
      processReads(n);
      settlementReads(n);
      roundFinishes(); // cancels the late bet, debited
    } else {
      settlementReads(log.length);
      roundFinishes(); // cancels the late bet, not debited yet
      processReads(log.length);
      log.push(ok('bet')); // the operator's late confirmation
      // Both read it before either reads what the other decides about it.
      const n = log.length;
      processReads(n);
      settlementReads(n);
    }
    for (let i = 0; i < 3; i++) {
      const n = log.length;
      processReads(n);
      settlementReads(n);
    }
    return log.filter((e) => e.type === 'RollbackRequested').length;
  }

  it("the drill's bet (debit confirmed after settlement's BetRejected): exactly one RollbackRequested on the log", () => {
    expect(rollbacksOnTheLog(false)).toBe(1);
  });

  it('debit confirmed before the cancellation: exactly one RollbackRequested on the log', () => {
    expect(rollbacksOnTheLog(true)).toBe(1);
  });
});

/** A small deterministic PRNG (mulberry32) for the random orders below. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe('invariants over 20,000 random histories', () => {
  const pool: WalletEvent[] = [
    ok('bet'),
    ok('bet', 'duplicate'),
    failed('bet', 'failed'),
    failed('bet', 'refused', false, 'INSUFFICIENT_FUNDS'),
    failed('bet', 'mismatch', true),
    settled('won'),
    settled('lost'),
    rollbackRequested,
    rejected('ROUND_CLOSED'),
    rejected('OPERATOR_ERROR'),
    ok('win'),
    ok('rollback'),
    ok('close'),
    failed('win', 'failed', true),
    failed('rollback', 'failed', true),
  ];

  it('never a rollback after a win or a confirmed loss, one credit at most, no win after a rollback, no payout before a confirmed debit', () => {
    const rnd = prng(12);
    for (let n = 0; n < 20_000; n++) {
      const events = [
        placed(),
        ...Array.from(
          { length: 1 + Math.floor(rnd() * 8) },
          () => pool[Math.floor(rnd() * pool.length)] as WalletEvent,
        ),
      ];
      let s: BetProcess | undefined;
      let confirmed = false;
      let wins = 0;
      let rolledBack = false;
      let settledLossConfirmed = false;
      const where = () => JSON.stringify(events.map((e) => e.type));
      for (const e of events) {
        const r = step(s, e, 10);
        for (const c of r.decision.commands) {
          if (c.type !== 'callback') {
            if (c.event.type === 'RollbackRequested') expect(wins, where()).toBe(0);
            continue;
          }
          if (c.job.kind === 'win') {
            wins++;
            expect(confirmed, `win before a confirmed debit: ${where()}`).toBe(true);
            expect(rolledBack, `win after a rollback: ${where()}`).toBe(false);
          }
          if (c.job.kind === 'rollback') {
            expect(wins, `rollback after a win: ${where()}`).toBe(0);
            expect(settledLossConfirmed, `rollback after a confirmed loss: ${where()}`).toBe(false);
            rolledBack = true;
          }
        }
        expect(wins, `more than one credit: ${where()}`).toBeLessThanOrEqual(1);
        s = r.state;
        if (s?.debit === 'confirmed') confirmed = true;
        if (s?.outcome === 'lost' && s.debit === 'confirmed') settledLossConfirmed = true;
      }
    }
  });
});
