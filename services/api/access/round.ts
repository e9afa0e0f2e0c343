/**
 * GET /play/round: the current round of the player session's game, for the player
 * page's countdown and live crash flight. The flight is drawn from its start (BettingClosed.at) and
 * the public formula m(t) = e^(0.00006 · speed · ms) (rules/games/crash.ts), not from server ticks:
 * the page needs no message per frame, every viewer sees the same curve, and nothing about the point
 * is sent before the round ends (docs/decisions/rounds-and-fairness/0003-round-lifecycle.md). `server_time` lets the page correct
 * its clock. Also the player's bets on that round and their cash-outs, so a reload keeps the button.
 */
import type { FastifyInstance } from 'fastify';
import type { Sql } from '../../../lib/db/pool.ts';
import type { RoundPhases } from '../../../lib/log/round-phases.ts';
import type { GameSlug } from '../../../rules/games/catalog.ts';
import type { Currencies } from '../../../rules/money/currencies.ts';
import { nextOpeningAt } from '../../../rules/rounds/lifecycle.ts';
import { roundBetsOf } from './bets-store.ts';
import { requirePlayer } from './guards.ts';
import { amountOut } from './money.ts';
import { playSchemas } from './schemas.ts';

const iso = (ms: number | null | undefined) =>
  ms === null || ms === undefined ? null : new Date(ms).toISOString();

/** Registers the route on `app`. */
export function roundRoute(
  app: FastifyInstance,
  deps: { sql: Sql; phases: RoundPhases; now: () => number; currencies: Currencies },
): void {
  const { sql, phases, now } = deps;
  app.get('/play/round', { schema: playSchemas.round }, async (req) => {
    const t = now();
    const s = await requirePlayer(sql, req, t);
    const game = s.game as GameSlug;
    const p = phases.phase(game);
    const current = p && p.phase !== 'finished' ? p : undefined;
    const bets = current ? await roundBetsOf(sql, s.session_id, current.opened.round_id) : [];
    return {
      game,
      server_time: t,
      round_id: current?.opened.round_id ?? null,
      phase: current?.phase ?? 'between',
      betting_opens_at: iso(current?.opened.betting_opens_at),
      betting_closes_at: iso(current?.opened.betting_closes_at),
      running_since: iso(current?.phase === 'running' ? current.closedAt : null),
      speed: current?.opened.speed ?? null,
      next_round_opens_at: iso(nextOpeningAt(game, p)),
      bets: bets.map((b) => ({
        tx_id: Number(b.tx_id),
        amount: amountOut(deps.currencies, Number(b.amount_minor), s.currency),
        auto_cashout: b.auto_cashout,
        cash_out: b.cash_out,
        cash_out_multiplier: b.cash_out_multiplier,
      })),
    };
  });
}
