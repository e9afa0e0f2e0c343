/**
 * POST /play/bets/:tx_id/cash-out: a player cashes out a crash bet by hand during
 * its round's flight. The round engine decides with its own clock when the request reaches it: the
 * flight's multiplier m(t), accepted only below the crash point (else the bet has crashed), and
 * appends the decision (BetCashedOut, before the round's RoundFinished in the log); settlement pays
 * exactly that (docs/architecture.md "Round lifecycle").
 *
 * The API checks the bet first (the player's own, on crash, its round in flight as read from the
 * log, not decided yet) and claims it with a conditional update of play_bets, so of two
 * simultaneous requests exactly one asks the engine; the other gets 409. An auto cash-out the
 * flight has already passed came first: the answer says so and the manual one is not asked.
 */
import type { FastifyInstance } from 'fastify';
import type { Sql } from '../../../lib/db/pool.ts';
import type { RoundPhases } from '../../../lib/log/round-phases.ts';
import { centsToMultiplier, pointCents } from '../../../rules/games/crash.ts';
import type { Currencies } from '../../../rules/money/currencies.ts';
import { flightMultiplier } from '../../../rules/rounds/lifecycle.ts';
import { ConflictError, InvalidInputError, NotFoundError } from '../errors.ts';
import { claimCashOut, markCashedOut, markCrashed, playBetOf, releaseCashOut } from './bets-store.ts';
import type { EngineClient } from './engine-client.ts';
import { requirePlayer } from './guards.ts';
import { amountOut } from './money.ts';
import { playSchemas } from './schemas.ts';

export interface CashOutDeps {
  readonly sql: Sql;
  readonly phases: RoundPhases;
  readonly engine: EngineClient;
  readonly now: () => number;
  /** The payout in the precision of the session's currency. */
  readonly currencies: Currencies;
}

/** The path's tx_id: a positive integer of at most 15 digits (TX_ID_PATTERN). */
export const TX_ID_PATTERN = '^[1-9][0-9]{0,14}$';

/**
 * The bet id of the path. A well-formed id that is no bet's (not a multiple of 4) is simply not
 * found (404), like any other id this session has no bet under.
 * @throws InvalidInputError naming `tx_id` when it is not a positive integer of at most 15 digits.
 */
function txIdOf(raw: string): number {
  if (!new RegExp(TX_ID_PATTERN).test(raw))
    throw new InvalidInputError('INVALID_INPUT', 'tx_id: must be a positive integer (the tx_id of a bet)');
  return Number(raw);
}

/** The smaller of two multipliers, as decimal strings. */
const lower = (a: string, b: string | null) => (b !== null && pointCents(b) < pointCents(a) ? b : a);

/** Registers the route on `app`. */
export function cashOutRoute(app: FastifyInstance, deps: CashOutDeps): void {
  const { sql, phases, engine, now } = deps;
  app.post<{ Params: { tx_id: string } }>(
    '/play/bets/:tx_id/cash-out',
    { schema: playSchemas.cashOut },
    async (req, reply) => {
      const t = now();
      const s = await requirePlayer(sql, req, t);
      const txId = txIdOf(req.params.tx_id);
      const bet = await playBetOf(sql, txId, s.session_id);
      if (!bet) throw new NotFoundError('BET_NOT_FOUND', `tx_id: no bet ${txId} of this session`);
      if (bet.game !== 'crash')
        throw new ConflictError(
          'NOT_A_CRASH_BET',
          `tx_id: bet ${txId} is on ${bet.game}; only crash bets cash out`,
        );
      if (bet.cash_out === 'accepted' || bet.cash_out === 'pending')
        throw new ConflictError('ALREADY_CASHED_OUT', `bet ${txId} is already cashed out`, {
          multiplier: bet.cash_out_multiplier,
        });
      if (bet.cash_out === 'crashed')
        throw new ConflictError('CRASHED', `bet ${txId} crashed before its cash-out`);
      const roundId = Number(bet.round_id);
      const p = phases.phase('crash');
      const current = p && p.phase !== 'finished' ? p.opened.round_id : undefined;
      if (p?.phase === 'betting' && current === roundId)
        throw new ConflictError(
          'FLIGHT_NOT_STARTED',
          `round ${roundId} is still taking bets; it has not taken off`,
        );
      if (p?.phase !== 'running' || current !== roundId)
        throw new ConflictError(
          'ROUND_FINISHED',
          `round ${roundId} is over; bet ${txId} is settled by its result`,
        );
      const estimate = flightMultiplier({ startedAt: p.closedAt, speed: p.opened.speed }, t);
      if (bet.auto_cashout !== null && pointCents(estimate) >= pointCents(bet.auto_cashout))
        throw new ConflictError('ALREADY_CASHED_OUT', `the auto cash-out at ${bet.auto_cashout} came first`, {
          multiplier: bet.auto_cashout,
        });
      if (!(await claimCashOut(sql, txId)))
        throw new ConflictError('ALREADY_CASHED_OUT', `bet ${txId} is already being cashed out`);
      let answer: Awaited<ReturnType<EngineClient['cashOut']>>;
      try {
        answer = await engine.cashOut('crash', roundId, txId);
      } catch (err) {
        await releaseCashOut(sql, txId);
        throw err;
      }
      if (answer.status !== 'accepted') {
        await markCrashed(sql, txId);
        throw new ConflictError('CRASHED', `round ${roundId} crashed before the cash-out of bet ${txId}`);
      }
      await markCashedOut(sql, txId, answer.multiplier, new Date(answer.at));
      // Settlement pays the lower of the manual and the auto cash-out (the flight passed both).
      const multiplier = lower(answer.multiplier, bet.auto_cashout);
      const payoutMinor = (BigInt(bet.amount_minor) * BigInt(pointCents(multiplier))) / 100n;
      return reply.send({
        tx_id: txId,
        round_id: roundId,
        multiplier,
        at: new Date(answer.at).toISOString(),
        payout: amountOut(deps.currencies, Number(payoutMinor), s.currency),
        requested_multiplier: centsToMultiplier(pointCents(estimate)),
      });
    },
  );
}
