/**
 * POST /play/bets: checks a player's bet and appends BetPlaced to
 * `wallet-transactions` (key `operator_id:user_id`); the wallet-saga and settlement take it from
 * there. Rules (docs/decisions/rest-api/0007-bets-through-the-session-api.md):
 * - a bet goes only on the round of the session's game whose betting window is open, as read from
 *   the `rounds` log (lib/log/round-phases.ts: RoundOpened seen, BettingClosed not yet) and before
 *   its announced close by the API's clock; otherwise 409 BETTING_CLOSED with the next round's
 *   opening time when it can be told. A given `round_id` must be that round (an earlier one is
 *   409 BETTING_CLOSED, a later one 409 ROUND_NOT_OPEN). Settlement checks the log order again, so
 *   a slow API or a skewed clock cannot reopen a window;
 * - count_register comes from an atomic per-(operator, user, round) counter (migration 004), not
 *   from the asynchronously projected wallet_transactions, so two quick bets never share a number;
 * - tx_id = nextval('wallet_tx_seq') × 4 (rules/money/money.ts betTxId);
 * - a free bet takes one grant (conditional decrement of quantity_left; stake = grant value);
 * - demo sessions bet their virtual balance: the check and the debit are one conditional upsert of
 *   demo_wallets (migration 006), so no concurrency takes it below zero (402 when short);
 * - the accepted bet is kept in play_bets (migration 006) for its cash-out.
 * If the append fails, the grant, the counter and a demo debit are given back; the sequence value
 * is skipped.
 *
 * 202 only for a bet on the log before its round's close (docs/decisions/rounds-and-fairness/0004-bets-only-in-the-betting-window.md): a record still queued at the announced close is not sent (409 BETTING_CLOSED, all
 * given back); one the broker appended at or after the round's BettingClosed (the announced close
 * when that record is not read within LATE_APPEND_CLOSE_WAIT_MS) is answered 409 BETTING_CLOSED
 * with its `tx_id`, since settlement cancels it, which gives its stake back (it stays in play_bets,
 * so the player sees it cancelled).
 */
import type { FastifyInstance } from 'fastify';
import type { BreakerReader } from '../../../lib/db/operator-breakers.ts';
import type { Sql } from '../../../lib/db/pool.ts';
import { AppendDeadlineError } from '../../../lib/errors.ts';
import type { Appended, BatchingAppender } from '../../../lib/log/batching-appender.ts';
import type { RoundPhases } from '../../../lib/log/round-phases.ts';
import { topicName } from '../../../lib/log/topics.ts';
import { type BetPlaced, encodeEvent, walletKey } from '../../../lib/log/wallet-events.ts';
import { type GameSlug, gameBySlug } from '../../../rules/games/catalog.ts';
import type { Currencies } from '../../../rules/money/currencies.ts';
import { betTxId } from '../../../rules/money/money.ts';
import { nextOpeningAt } from '../../../rules/rounds/lifecycle.ts';
import { refusesBets } from '../../../rules/wallet/breaker.ts';
import type { ApiConfig } from '../config.ts';
import {
  ConflictError,
  InsufficientFundsError,
  InvalidInputError,
  OperatorUnavailableError,
} from '../errors.ts';
import { debitDemo, refundDemo } from './balance.ts';
import {
  countBet,
  deleteRedemption,
  insertPlayBet,
  insertRedemption,
  returnFreeBet,
  type TakenGrant,
  takeFreeBet,
  uncountBet,
} from './bets-store.ts';
import { type PlayerSession, requirePlayer } from './guards.ts';
import { betBody, parseInput } from './input.ts';
import { amountOut, minorOf } from './money.ts';
import { playSchemas } from './schemas.ts';
import { selectionFor } from './selection.ts';

export interface BetDeps {
  readonly config: Pick<ApiConfig, 'kafka'>;
  readonly sql: Sql;
  /** Each game's round phase, from the log. */
  readonly phases: RoundPhases;
  readonly now: () => number;
  /** The stake is read in the precision of the session's currency. */
  readonly currencies: Currencies;
  /** The operators' circuit breakers: an open one refuses the bet at once. */
  readonly breakers: BreakerReader;
  /** BetPlaced goes to the log through it: concurrent bets share produce requests. */
  readonly appender: BatchingAppender;
}

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

/**
 * Bets stop this long before the announced close (ms; at most a tenth of the window), so that a bet
 * taken in the last moment still reaches the log before BettingClosed: one that does not is
 * cancelled by settlement, which a player sees as a bet taken then refused.
 */
export const CLOSE_GUARD_MS = 100;

/** 409 BETTING_CLOSED with the next round's opening time when it can be told; `extra` joins the body. */
function bettingClosed(
  phases: RoundPhases,
  slug: GameSlug,
  detail: string,
  extra: Record<string, unknown> = {},
): ConflictError {
  return new ConflictError('BETTING_CLOSED', detail, {
    next_round_opens_at: iso(nextOpeningAt(slug, phases.phase(slug))),
    ...extra,
  });
}

/**
 * The round a bet at `now` goes on: the open round of the session's game.
 * @throws ConflictError BETTING_CLOSED (no window open, or `asked` is an earlier round) or
 *   ROUND_NOT_OPEN (`asked` is a later round); InvalidInputError for a game without bets.
 */
export function roundFor(
  phases: RoundPhases,
  s: PlayerSession,
  asked: number | undefined,
  now: number,
): number {
  return windowFor(phases, s, asked, now).roundId;
}

/**
 * As `roundFor`, with the round's announced close (`betting_closes_at`, Unix ms).
 * @throws as roundFor.
 */
export function windowFor(
  phases: RoundPhases,
  s: PlayerSession,
  asked: number | undefined,
  now: number,
): { roundId: number; closesAt: number } {
  const game = gameBySlug(s.game);
  if (!game) throw new InvalidInputError('INVALID_SELECTION', `no bets on game ${s.game}`);
  const p = phases.phase(game.slug as GameSlug);
  const closed = (detail: string) => bettingClosed(phases, game.slug as GameSlug, detail);
  const guard =
    p?.phase === 'betting'
      ? Math.min(CLOSE_GUARD_MS, (p.opened.betting_closes_at - p.opened.betting_opens_at) / 10)
      : 0;
  if (p?.phase !== 'betting' || now >= p.opened.betting_closes_at - guard)
    throw closed(`betting is closed on ${game.slug}: no round is taking bets now`);
  const open = p.opened.round_id;
  if (asked === undefined || asked === open) return { roundId: open, closesAt: p.opened.betting_closes_at };
  if (asked < open) throw closed(`round_id: round ${asked} takes no more bets; the open round is ${open}`);
  throw new ConflictError(
    'ROUND_NOT_OPEN',
    `round_id: round ${asked} is not open yet; the open round is ${open}`,
    {
      open_round_id: open,
    },
  );
}

/**
 * Longest wait, ms, for the round's BettingClosed to be read from the log when a bet's append came
 * after the announced close (a failover held it; the close may be held as well).
 */
export const LATE_APPEND_CLOSE_WAIT_MS = 3000;

/**
 * The time a bet appended at `appendedAt` is judged against, as settlement judges it
 * (rules/bets/settle.ts: the broker append time of the round's BettingClosed), Unix ms; undefined
 * when the bet is in time. Read from the log when known. Not read yet: an append before the
 * announced close `closesAt` is in time (the engine appends BettingClosed at that close); one at or
 * after it waits up to LATE_APPEND_CLOSE_WAIT_MS for the record, and without it is judged against
 * the announced close.
 */
async function closeOnTheLog(
  phases: RoundPhases,
  game: GameSlug,
  roundId: number,
  closesAt: number,
  appendedAt: number,
): Promise<number | undefined> {
  const read = () => phases.closedAppendedAt(game, roundId);
  if (read() !== undefined || appendedAt < closesAt) return read();
  const until = Date.now() + LATE_APPEND_CLOSE_WAIT_MS;
  while (read() === undefined && Date.now() < until) await new Promise((r) => setTimeout(r, 10));
  return read() ?? closesAt;
}

/** Takes one free bet of the player's grants (soonest to expire first). @throws ConflictError */
async function takeGrant(sql: Sql, s: PlayerSession, at: Date): Promise<TakenGrant> {
  const g = await takeFreeBet(sql, s, at);
  if (!g) throw new ConflictError('NO_FREE_BET', 'no free bet is left for this player, game and currency');
  return g;
}

/** Registers POST /play/bets on `app`. */
export function betRoute(app: FastifyInstance, deps: BetDeps): void {
  const { sql, config, now, phases } = deps;
  app.post('/play/bets', { schema: playSchemas.bet }, async (req, reply) => {
    const t = now();
    const s = await requirePlayer(sql, req, t);
    const b = parseInput(betBody, req.body, 'body');
    const selection = selectionFor(s.game, b.selection);
    if (b.free && s.demo)
      throw new InvalidInputError('INVALID_INPUT', 'free: demo sessions have no free bets');
    const roundId = roundFor(phases, s, b.round_id, t);
    if (!s.demo) {
      // an operator whose wallet is failing gets no new bets until a probe succeeds.
      const refusal = refusesBets(await deps.breakers.state(s.operator_id, t), t);
      if (refusal.refused)
        throw new OperatorUnavailableError(
          `the operator's wallet is not answering; bets are refused for now`,
          refusal.retryAfterS,
        );
    }
    let amountMinor = b.amount === undefined ? 0 : minorOf(deps.currencies, b.amount, s.currency, 'amount');
    if (s.demo && !(await debitDemo(sql, s, amountMinor, deps.currencies)))
      throw new InsufficientFundsError('the virtual balance does not cover this bet');
    const grant = b.free ? await takeGrant(sql, s, new Date(t)) : null;
    if (grant) amountMinor = grant.valueMinor;
    const c = await countBet(sql, s, roundId);
    const event: BetPlaced = {
      tx_id: betTxId(Number(c?.seq)),
      bet: {
        session_id: s.session_id,
        operator_id: s.operator_id,
        user_id: s.user_id,
        currency: s.currency,
        game: s.game,
        round_id: roundId,
        amount_minor: amountMinor,
        mode: grant ? 'free' : 'default',
        bonus_code: grant?.bonusCode ?? null,
        free_bet_id: grant ? String(grant.grantId) : null,
        count_register: c?.bets as number,
        demo: s.demo,
      },
      selection,
      placed_at: t,
    };
    // The grant's redemption, so a free bet the operator refuses (or the round cancels) is returned
    // to the player (free-bet-returns.ts).
    if (grant) await insertRedemption(sql, event.tx_id, grant.grantId);
    let appended: Appended;
    let closesAt: number;
    try {
      // The window again, right before the append: the writes above take time under load, and a
      // bet that reaches the log after BettingClosed would only be cancelled by settlement.
      closesAt = windowFor(phases, s, roundId, now()).closesAt;
      // Queued behind an append a failover holds, the record is refused at the close, not sent.
      appended = await deps.appender.append(
        topicName(config, 'walletTransactions'),
        walletKey(event.bet),
        encodeEvent({ type: 'BetPlaced', value: event }),
        { deadline: closesAt },
      );
    } catch (err) {
      if (s.demo) await refundDemo(sql, s, amountMinor);
      if (grant) {
        await deleteRedemption(sql, event.tx_id);
        await returnFreeBet(sql, grant.grantId);
      }
      await uncountBet(sql, s, roundId);
      if (err instanceof AppendDeadlineError)
        throw bettingClosed(
          phases,
          s.game as GameSlug,
          `betting closed on ${s.game} while the bet waited to reach the log; it was not placed`,
        );
      throw err;
    }
    const crash = 'casino.wallet.CrashBet' in selection ? selection['casino.wallet.CrashBet'] : null;
    await insertPlayBet(sql, {
      txId: event.tx_id,
      sessionId: s.session_id,
      game: s.game,
      roundId,
      amountMinor,
      autoCashout: crash?.auto_cashout ?? null,
      placedAt: new Date(t),
    });
    // Settlement judges the bet by the log: appended at or after the round's BettingClosed, it is
    // cancelled (its stake comes back through the cancellation, not here: the record is on the log).
    const closedAt = await closeOnTheLog(phases, s.game as GameSlug, roundId, closesAt, appended.appendedAt);
    if (closedAt !== undefined && appended.appendedAt >= closedAt)
      throw bettingClosed(
        phases,
        s.game as GameSlug,
        `bet ${event.tx_id} reached the log at ${new Date(appended.appendedAt).toISOString()}, after betting closed at ${new Date(closedAt).toISOString()}: it is cancelled and its stake returned`,
        { tx_id: event.tx_id, round_id: roundId },
      );
    return reply.code(202).send({
      tx_id: event.tx_id,
      round_id: roundId,
      count_register: event.bet.count_register,
      mode: event.bet.mode,
      amount: amountOut(deps.currencies, amountMinor, s.currency),
    });
  });
}
