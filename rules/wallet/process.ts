/**
 * One process manager per bet (docs/architecture.md "Money rules"), pure decide/evolve: the
 * bet's state is built from its wallet events, and every callback and every event the saga appends
 * is decided from that state plus the event, never from the event alone. No I/O, no clock (`at`,
 * Unix ms, comes in).
 *
 *   placed ─debit─▶ confirmed ──BetSettled won──▶ win requested ─▶ credited (or parked)
 *     │                 ├────BetSettled lost──▶ round close requested ─▶ closed
 *     │                 └────cancelled by settlement (late) ─▶ rollback requested ─▶ rolled back
 *     ├─cancelled by settlement, then debit confirmed ─▶ rollback requested ─▶ rolled back
 *     ├─refused (no money moved) ─▶ rejected, no rollback
 *     ├─failed (unknown outcome) ─▶ rejected + rollback requested ─▶ rolled back
 *     └─mismatching duplicate ─▶ rejected, parked for ops (no guess either way)
 *
 * Invariants (each a unit test in process.unit.test.ts, and checked again by the reconciliation
 * of the fault suite):
 * - no rollback after a win, or after a settled loss whose debit was confirmed;
 * - at most one credit per bet (the win's transaction id is the bet's + 1, and it is asked once);
 * - no win for a rolled-back (or rejected) bet;
 * - no payout before the debit is confirmed: a debit whose outcome is unknown is resolved (by a
 *   definite answer to the same id, or by its rollback) first.
 * An event that would break one is not acted on: decide returns it as a `violation` for the
 * saga to log and count.
 *
 * The process is the one owner of the rollback decision: settlement only cancels (BetRejected),
 * and the process requests the rollback whichever comes first on the bet's partition, the
 * cancellation or the debit's confirmation, so a bet gets exactly one RollbackRequested.
 *
 * Demo bets move no money and have no process. A free bet is registered at the operator as a bet
 * that moves no money (its Register Bet carries amount 0, mode "free", the free
 * bet's id and bonus code), so its win, round close or rollback refers to a bet the operator
 * booked, and follows the same rules as a real-money bet's.
 */
import { betTxIdOf } from '../bets/settle.ts';
import { rollbackTxId, winTxId } from '../money/money.ts';
import type { CallbackJob, CallbackKind } from './bodies.ts';
import type { BetContext, WalletEvent } from './events.ts';

/** Where the bet's debit (a free bet's registration) stands. `none`: nothing to debit. */
export type Debit = 'none' | 'pending' | 'confirmed' | 'refused' | 'failed' | 'parked';
/** One later callback of the bet (its win, rollback or round close). */
export type Leg = 'none' | 'requested' | 'done' | 'parked';
/** What settlement or the saga made of the bet. */
export type Outcome = 'open' | 'won' | 'lost' | 'rejected';

/** The state of one bet's process. JSON-safe (kept as jsonb in wallet_bets). */
export interface BetProcess {
  readonly txId: number;
  readonly bet: BetContext;
  readonly debit: Debit;
  readonly outcome: Outcome;
  /** Minor units; set when the bet is won. */
  readonly payoutMinor: number;
  readonly win: Leg;
  readonly rollback: Leg;
  readonly close: Leg;
}

/** What the process asks for: a callback to schedule (idempotent by tx id) or an event to append. */
export type Command =
  | { readonly type: 'callback'; readonly job: CallbackJob }
  | { readonly type: 'append'; readonly event: WalletEvent };

export interface Decision {
  readonly commands: readonly Command[];
  /** Set when the event asked for something an invariant forbids; nothing is done for it. */
  readonly violation?: string;
}

const NOTHING: Decision = { commands: [] };

/** The bet tx id a wallet event belongs to (the same rule as settlement's). */
export const betOf = betTxIdOf;

/** True when the bet has a process: not demo (demo bets call no operator). */
export function hasProcess(bet: BetContext): boolean {
  return !bet.demo;
}

/** The money a bet's debit (and its rollback) moves, minor units: its stake, 0 for a free bet. */
export function stakeOf(bet: BetContext): number {
  return bet.mode === 'free' ? 0 : bet.amount_minor;
}

function job(s: BetProcess, kind: CallbackKind, txId: number, amountMinor: number): Command {
  return { type: 'callback', job: { kind, txId, betTxId: s.txId, amountMinor, bet: s.bet } };
}

/** The bet's own rollback and its callback. */
function rollbackOf(s: BetProcess, reason: string, at: number): Command[] {
  return [
    {
      type: 'append',
      event: {
        type: 'RollbackRequested',
        value: { tx_id: rollbackTxId(s.txId), linked_tx_id: s.txId, bet: s.bet, reason, at },
      },
    },
    job(s, 'rollback', rollbackTxId(s.txId), stakeOf(s.bet)),
  ];
}

function rejected(s: BetProcess, code: string, reason: string, at: number): Command {
  return { type: 'append', event: { type: 'BetRejected', value: { tx_id: s.txId, code, reason, at } } };
}

/** Whether a rollback of `s` is allowed now, or why not. */
function rollbackForbidden(s: BetProcess): string | undefined {
  if (s.outcome === 'won' || s.win !== 'none') return 'rollback after a win';
  if (s.outcome === 'lost' && s.debit === 'confirmed')
    return 'rollback after a settled loss with a confirmed debit';
  return undefined;
}

/**
 * What the process does about `e`, given its state before `e` (`undefined` before the BetPlaced).
 * Apply `evolve(s, e)` afterwards; decide and evolve are idempotent together, so an event read
 * twice (a re-read after a restart) asks again only for what is keyed by a tx id and already done.
 */
export function decide(s: BetProcess | undefined, e: WalletEvent, at: number): Decision {
  if (e.type === 'BetPlaced') {
    const { bet, tx_id } = e.value;
    if (s || !hasProcess(bet)) return NOTHING;
    return {
      commands: [
        {
          type: 'callback',
          job: { kind: 'bet', txId: tx_id, betTxId: tx_id, amountMinor: stakeOf(bet), bet },
        },
      ],
    };
  }
  if (!s) return NOTHING;
  switch (e.type) {
    case 'CallbackSucceeded': {
      // A debit confirmed after the bet was already given up (a late answer after a restart or a
      // re-drive): the money moved, so it goes back.
      if (
        e.value.kind === 'bet' &&
        s.outcome === 'rejected' &&
        s.rollback === 'none' &&
        s.debit !== 'confirmed'
      )
        return { commands: rollbackOf(s, 'debit confirmed after the bet was rejected', at) };
      return NOTHING;
    }
    case 'CallbackFailed': {
      const v = e.value;
      if (v.kind !== 'bet' || s.debit !== 'pending') return NOTHING; // a confirmed debit stays confirmed
      if (v.answer === 'refused')
        return { commands: [rejected(s, v.code || 'OPERATOR_REFUSED', v.error, at)] };
      if (v.answer === 'mismatch')
        return { commands: [rejected(s, 'DUPLICATE_MISMATCH', `parked for ops: ${v.error}`, at)] };
      const code = v.code === 'TIMEOUT' ? 'TIMEOUT' : 'OPERATOR_ERROR';
      return {
        commands: [rejected(s, code, v.error, at), ...rollbackOf(s, `bet callback ${code}: ${v.error}`, at)],
      };
    }
    case 'RollbackRequested': {
      if (s.debit === 'none') return NOTHING;
      const why = rollbackForbidden(s);
      if (why) return { commands: [], violation: `${why}: RollbackRequested ${e.value.tx_id} ignored` };
      if (s.rollback === 'done' || s.rollback === 'parked') return NOTHING;
      return { commands: [job(s, 'rollback', e.value.tx_id, stakeOf(s.bet))] };
    }
    case 'BetSettled': {
      const v = e.value;
      if (s.outcome === 'rejected' || s.rollback !== 'none')
        return {
          commands: [],
          violation: `no win or close for a rolled-back or rejected bet: BetSettled ${v.tx_id} ignored`,
        };
      if (s.outcome !== 'open') return NOTHING; // settled once; a repeat (or a contradiction) changes nothing
      if (s.debit !== 'confirmed')
        return {
          commands: [],
          violation: `settled before its debit was confirmed: BetSettled ${v.tx_id} ignored`,
        };
      if (v.outcome === 'won' && v.payout_minor > 0) {
        if (s.win !== 'none') return NOTHING;
        return { commands: [job(s, 'win', v.win_tx_id ?? winTxId(s.txId), v.payout_minor)] };
      }
      if (s.close !== 'none') return NOTHING;
      return { commands: [job(s, 'close', winTxId(s.txId), 0)] };
    }
    case 'BetRejected': {
      // Settlement cancels a bet (ROUND_CLOSED, INVALID_BET) and leaves its rollback to the
      // process, the one owner of every RollbackRequested: two deciders reading the same events
      // would each append one (docs/decisions/money/0001-process-manager-per-bet.md). Its own
      // BetRejected, read back, finds the bet already rejected.
      if (s.outcome !== 'open' || s.debit !== 'confirmed' || s.rollback !== 'none') return NOTHING;
      if (rollbackForbidden(s)) return NOTHING;
      return { commands: rollbackOf(s, `bet cancelled after its debit (${e.value.code})`, at) };
    }
  }
}

const LEG_RANK: readonly Leg[] = ['none', 'requested', 'parked', 'done'];
const up = (a: Leg, b: Leg): Leg => (LEG_RANK.indexOf(b) > LEG_RANK.indexOf(a) ? b : a);
const legOf = (kind: CallbackKind): 'win' | 'rollback' | 'close' | undefined =>
  kind === 'bet' ? undefined : kind;

/**
 * The state after `e`. Starts at a BetPlaced (a repeated one changes nothing); any other event
 * before it returns `undefined`. Moves only forward, so a repeated event changes nothing.
 */
export function evolve(s: BetProcess | undefined, e: WalletEvent): BetProcess | undefined {
  if (e.type === 'BetPlaced') {
    if (s || !hasProcess(e.value.bet)) return s;
    const bet = e.value.bet;
    return {
      txId: e.value.tx_id,
      bet,
      debit: 'pending',
      outcome: 'open',
      payoutMinor: 0,
      win: 'none',
      rollback: 'none',
      close: 'none',
    };
  }
  if (!s) return undefined;
  switch (e.type) {
    case 'CallbackSucceeded': {
      if (e.value.kind === 'bet') return s.debit === 'confirmed' ? s : { ...s, debit: 'confirmed' };
      const leg = legOf(e.value.kind) as 'win' | 'rollback' | 'close';
      return { ...s, [leg]: 'done' };
    }
    case 'CallbackFailed': {
      const v = e.value;
      if (v.kind === 'bet') {
        if (s.debit !== 'pending') return s;
        const debit: Debit =
          v.answer === 'refused' ? 'refused' : v.answer === 'mismatch' ? 'parked' : 'failed';
        return { ...s, debit };
      }
      if (!v.parked) return s;
      const leg = legOf(v.kind) as 'win' | 'rollback' | 'close';
      return { ...s, [leg]: up(s[leg], 'parked') };
    }
    case 'RollbackRequested': {
      if (s.debit === 'none' || rollbackForbidden(s)) return s;
      return { ...s, rollback: up(s.rollback, 'requested') };
    }
    case 'BetSettled': {
      const v = e.value;
      // Mirrors decide: a settlement the process did not act on changes nothing.
      if (s.outcome !== 'open' || s.rollback !== 'none') return s;
      if (s.debit !== 'confirmed') return s;
      if (v.outcome === 'won' && v.payout_minor > 0)
        return { ...s, outcome: 'won', payoutMinor: v.payout_minor, win: up(s.win, 'requested') };
      return { ...s, outcome: 'lost', close: up(s.close, 'requested') };
    }
    case 'BetRejected':
      return s.outcome === 'open' ? { ...s, outcome: 'rejected' } : s;
  }
}

/**
 * Applies `e`: the decision on the state before it, and the state after it and after the events
 * the decision appends (so what the process decided holds at once, before those events are read
 * back from the log; reading them back then changes nothing).
 */
export function step(
  s: BetProcess | undefined,
  e: WalletEvent,
  at: number,
): { state: BetProcess | undefined; decision: Decision } {
  const decision = decide(s, e, at);
  let state = evolve(s, e);
  for (const c of decision.commands) if (c.type === 'append') state = evolve(state, c.event);
  return { state, decision };
}

/** True when nothing more will happen for the bet (every leg it needs is done). */
export function finished(s: BetProcess): boolean {
  if (s.rollback === 'requested' || s.win === 'requested' || s.close === 'requested') return false;
  if (s.debit === 'pending') return false;
  return s.outcome !== 'open' || s.debit === 'refused' || s.debit === 'failed';
}
