/**
 * The wallet projection as pure code ("given these events, then these rows"): events of
 * `wallet-transactions` become patches of `wallet_transactions` rows (one per tx_id: the bet,
 * its win tx_id+1, its rollback tx_id+2) and balance entries of `wallet_balances`. No I/O, no
 * clock: times come from the events (Unix ms).
 *
 * Convergence: a patch only ever moves a row forward, whatever the arrival order: `status` and
 * `round_status` take the higher rank (STATUS_RANK, ROUND_RANK), attempts the maximum, operator
 * answers the first one stored, requested_at the earliest, updated_at the latest. So a
 * duplicated or replayed event changes nothing, and a CallbackSucceeded for a win row not yet
 * inserted creates it (bet context from the bet row). `merge` and store.ts's upsert share the rules.
 */
import type { BetContext, WalletEvent } from '../../log/wallet-events.ts';

export type TxStatus = 'pending' | 'failed' | 'parked' | 'rejected' | 'succeeded';
export type RoundStatus = 'open' | 'lost' | 'won' | 'cancelled';
/** `close`: a lost bet's round closed at the operator, tx_id = the bet's + 1. */
export type TxKind = 'bet' | 'win' | 'rollback' | 'close';

/**
 * Precedence of a transaction's status: an operator-confirmed transaction stays succeeded (money
 * moved; a cancelled bet's refund is its rollback row), a rejection beats a failed attempt.
 */
export const STATUS_RANK: readonly TxStatus[] = ['pending', 'failed', 'parked', 'rejected', 'succeeded'];
/** Precedence of a round status: cancelled is final; won and lost never meet. */
export const ROUND_RANK: readonly RoundStatus[] = ['open', 'lost', 'won', 'cancelled'];

/** What one batch says about one wallet_transactions row; null = unknown here. */
export interface TxPatch {
  readonly tx_id: number;
  readonly bet_tx_id: number;
  readonly kind: TxKind;
  /** The bet's context; null when the event does not carry it (copied from the bet row then). */
  readonly ctx: BetContext | null;
  readonly amount_minor: number | null;
  readonly status: TxStatus | null;
  readonly round_status: RoundStatus | null;
  readonly attempts: number | null;
  readonly operator_tx_id: string | null;
  readonly old_balance: string | null;
  readonly new_balance: string | null;
  readonly detail: string | null;
  readonly requested_at: number;
  readonly updated_at: number;
}

/** A balance the operator answered, in log order (`seq`) within the batch. */
export interface BalanceEntry {
  readonly bet_tx_id: number;
  /** Known when the bet's events are in the batch; else taken from the stored bet row. */
  readonly ctx: BetContext | null;
  readonly balance: string;
  readonly at: number;
  readonly seq: number;
}

const higher = <T>(rank: readonly T[], a: T | null, b: T | null): T | null =>
  a === null ? b : b === null ? a : rank.indexOf(b) > rank.indexOf(a) ? b : a;

/** Merges patch `b` (later in the log) into `a` of the same tx_id. */
export function merge(a: TxPatch, b: TxPatch): TxPatch {
  return {
    tx_id: a.tx_id,
    bet_tx_id: a.bet_tx_id,
    kind: a.kind,
    ctx: a.ctx ?? b.ctx,
    amount_minor: a.amount_minor === null ? b.amount_minor : Math.max(a.amount_minor, b.amount_minor ?? 0),
    status: higher(STATUS_RANK, a.status, b.status),
    round_status: higher(ROUND_RANK, a.round_status, b.round_status),
    attempts: a.attempts === null ? b.attempts : Math.max(a.attempts, b.attempts ?? 0),
    operator_tx_id: a.operator_tx_id ?? b.operator_tx_id,
    old_balance: a.old_balance ?? b.old_balance,
    new_balance: a.new_balance ?? b.new_balance,
    detail: b.detail ?? a.detail,
    requested_at: Math.min(a.requested_at, b.requested_at),
    updated_at: Math.max(a.updated_at, b.updated_at),
  };
}

const EMPTY = {
  ctx: null,
  amount_minor: null,
  status: null,
  round_status: null,
  attempts: null,
  operator_tx_id: null,
  old_balance: null,
  new_balance: null,
  detail: null,
} as const;

const kindRound = (kind: TxKind): RoundStatus | null =>
  kind === 'win' ? 'won' : kind === 'rollback' ? 'cancelled' : kind === 'close' ? 'lost' : null;

/** The row patches one event makes (a BetSettled won or a RollbackRequested touch two rows). */
export function patchesOf(e: WalletEvent): TxPatch[] {
  switch (e.type) {
    case 'BetPlaced': {
      const v = e.value;
      const at = v.placed_at;
      // A demo bet calls no operator; a free bet is registered like a bet and waits for it.
      const demo = v.bet.demo;
      return [
        {
          ...EMPTY,
          tx_id: v.tx_id,
          bet_tx_id: v.tx_id,
          kind: 'bet',
          ctx: v.bet,
          amount_minor: v.bet.amount_minor,
          status: demo ? 'succeeded' : 'pending',
          round_status: 'open',
          requested_at: at,
          updated_at: at,
        },
      ];
    }
    case 'CallbackSucceeded': {
      const v = e.value;
      return [
        {
          ...EMPTY,
          tx_id: v.tx_id,
          bet_tx_id: v.bet_tx_id,
          kind: v.kind,
          amount_minor: v.amount_minor,
          status: 'succeeded',
          round_status: kindRound(v.kind),
          attempts: v.attempts,
          operator_tx_id: v.operator_tx_id,
          old_balance: v.old_balance,
          new_balance: v.new_balance,
          requested_at: v.at,
          updated_at: v.at,
        },
      ];
    }
    case 'CallbackFailed': {
      const v = e.value;
      return [
        {
          ...EMPTY,
          tx_id: v.tx_id,
          bet_tx_id: v.bet_tx_id,
          kind: v.kind,
          status: v.parked ? 'parked' : 'failed',
          round_status: kindRound(v.kind),
          attempts: v.attempts,
          detail: v.error,
          requested_at: v.at,
          updated_at: v.at,
        },
      ];
    }
    case 'BetRejected': {
      const v = e.value;
      const base = { ...EMPTY, tx_id: v.tx_id, bet_tx_id: v.tx_id, kind: 'bet' as const };
      return [
        {
          ...base,
          status: 'rejected',
          round_status: 'cancelled',
          detail: `${v.code}: ${v.reason}`,
          requested_at: v.at,
          updated_at: v.at,
        },
      ];
    }
    case 'RollbackRequested': {
      const v = e.value;
      const t = { requested_at: v.at, updated_at: v.at };
      return [
        {
          ...EMPTY,
          ...t,
          tx_id: v.linked_tx_id,
          bet_tx_id: v.linked_tx_id,
          kind: 'bet',
          ctx: v.bet,
          round_status: 'cancelled',
        },
        {
          ...EMPTY,
          ...t,
          tx_id: v.tx_id,
          bet_tx_id: v.linked_tx_id,
          kind: 'rollback',
          ctx: v.bet,
          amount_minor: v.bet.amount_minor,
          status: 'pending',
          round_status: 'cancelled',
          detail: v.reason,
        },
      ];
    }
    case 'BetSettled': {
      const v = e.value;
      const t = { requested_at: v.at, updated_at: v.at };
      const bet: TxPatch = {
        ...EMPTY,
        ...t,
        tx_id: v.tx_id,
        bet_tx_id: v.tx_id,
        kind: 'bet',
        ctx: v.bet,
        round_status: v.outcome,
      };
      if (v.outcome !== 'won') return [bet];
      const win: TxPatch = {
        ...EMPTY,
        ...t,
        tx_id: v.win_tx_id ?? v.tx_id + 1,
        bet_tx_id: v.tx_id,
        kind: 'win',
        ctx: v.bet,
        amount_minor: v.payout_minor,
        status: v.bet.demo ? 'succeeded' : 'pending', // a demo win calls no operator
        round_status: 'won',
      };
      return [bet, win];
    }
  }
}

/** Folds a batch (log order) into one patch per tx_id and the operator balances answered. */
export function projectWallet(events: readonly WalletEvent[]): {
  patches: TxPatch[];
  balances: BalanceEntry[];
} {
  const patches = new Map<number, TxPatch>();
  const contexts = new Map<number, BetContext>();
  const balances: BalanceEntry[] = [];
  events.forEach((e, seq) => {
    for (const p of patchesOf(e)) {
      const cur = patches.get(p.tx_id);
      patches.set(p.tx_id, cur ? merge(cur, p) : p);
      if (p.ctx) contexts.set(p.bet_tx_id, p.ctx);
    }
    // A duplicate or unknown-transaction answer may carry no balance: nothing to learn then.
    if (e.type === 'CallbackSucceeded' && e.value.new_balance !== null) {
      const v = e.value;
      balances.push({ bet_tx_id: v.bet_tx_id, ctx: null, balance: v.new_balance as string, at: v.at, seq });
    }
  });
  return {
    patches: [...patches.values()].map((p) => (p.ctx ? p : { ...p, ctx: contexts.get(p.bet_tx_id) ?? null })),
    balances: balances.map((b) => ({ ...b, ctx: contexts.get(b.bet_tx_id) ?? null })),
  };
}
