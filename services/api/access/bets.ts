/**
 * POST /play/bets (issue 5 item 4, first step): checks a player's bet and appends BetPlaced to
 * `wallet-transactions` (key `operator_id:user_id`); the wallet-saga and settlement take it from
 * there. Rules (issue 5 contract "Bet lifecycle" 1, docs/decisions.md "Issue 5"):
 * - the bet is on the next round of the session's game: latest finished round_id + 1 from the
 *   rounds read model (`games.last_round`); a given round_id below that is 409 round closed, one
 *   more than a round ahead is 400 (one ahead is allowed: the page's live feed may lead the model);
 * - count_register comes from an atomic per-(operator, user, round) counter (migration 004), not
 *   from the asynchronously projected wallet_transactions, so two quick bets never share a number;
 * - tx_id = nextval('wallet_tx_seq') × 4 (rules/money/money.ts betTxId);
 * - a free bet takes one grant (conditional decrement of quantity_left; stake = grant value);
 * - demo sessions bet their virtual balance (402 when short) and have no free bets.
 * If the append fails, the grant and the counter are given back; the sequence value is skipped.
 */
import type { FastifyInstance } from 'fastify';
import type { Producer } from 'kafkajs';
import type { Sql } from '../../../lib/db/pool.ts';
import { appendWalletEvents, type BetPlaced, walletKey } from '../../../lib/log/wallet-events.ts';
import { gameBySlug } from '../../../rules/games/catalog.ts';
import { betTxId, toMajorNumber, toMinor } from '../../../rules/money/money.ts';
import { ROUND_ID_BASE } from '../../../rules/rounds/decider.ts';
import type { ApiConfig } from '../config.ts';
import { ConflictError, InsufficientFundsError, InvalidInputError } from '../errors.ts';
import { demoBalanceMinor } from './balance.ts';
import { type PlayerSession, requirePlayer } from './guards.ts';
import { betBody, parseInput } from './input.ts';
import { playSchemas } from './schemas.ts';
import { selectionFor } from './selection.ts';

export interface BetDeps {
  readonly config: Pick<ApiConfig, 'kafka'>;
  readonly sql: Sql;
  readonly producer: Producer;
  readonly now: () => number;
}

/** The round a bet goes on. @throws ConflictError (closed) or InvalidInputError (too far ahead). */
async function roundFor(sql: Sql, s: PlayerSession, asked: number | undefined): Promise<number> {
  const game = gameBySlug(s.game);
  if (!game) throw new InvalidInputError('INVALID_SELECTION', `no bets on game ${s.game}`);
  const [g] = await sql<{ last_round: string | null }[]>`select last_round from games where id = ${game.id}`;
  const next = (g?.last_round == null ? game.id * ROUND_ID_BASE : Number(g.last_round)) + 1;
  if (asked === undefined) return next;
  if (asked < next)
    throw new ConflictError('ROUND_CLOSED', `round ${asked} is closed; the next round is ${next}`);
  if (asked > next + 1)
    throw new InvalidInputError(
      'ROUND_NOT_OPEN',
      `round_id: round ${asked} is not open yet; the next is ${next}`,
    );
  return asked;
}

/** Takes one free bet of the player's grants (soonest to expire first). @throws ConflictError */
async function takeGrant(sql: Sql, s: PlayerSession, at: Date) {
  const [g] = await sql<{ grant_id: string; value_minor: string; bonus_code: string | null }[]>`
    update free_bets set quantity_left = quantity_left - 1
    where grant_id = (
      select grant_id from free_bets
      where operator_id = ${s.operator_id} and user_id = ${s.user_id} and game = ${s.game}
        and currency = ${s.currency} and quantity_left > 0 and expires_at > ${at}
      order by expires_at, grant_id limit 1 for update skip locked)
      and quantity_left > 0
    returning grant_id, value_minor, bonus_code`;
  if (!g) throw new ConflictError('NO_FREE_BET', 'no free bet is left for this player, game and currency');
  return { grantId: g.grant_id, valueMinor: Number(g.value_minor), bonusCode: g.bonus_code };
}

/** Registers POST /play/bets on `app`. */
export function betRoute(app: FastifyInstance, deps: BetDeps): void {
  const { sql, producer, config, now } = deps;
  app.post('/play/bets', { schema: playSchemas.bet }, async (req, reply) => {
    const t = now();
    const s = await requirePlayer(sql, req, t);
    const b = parseInput(betBody, req.body, 'body');
    const selection = selectionFor(s.game, b.selection);
    if (b.free && s.demo)
      throw new InvalidInputError('INVALID_INPUT', 'free: demo sessions have no free bets');
    const roundId = await roundFor(sql, s, b.round_id);
    let amountMinor = b.amount === undefined ? 0 : (toMinor(b.amount) as number);
    if (s.demo && amountMinor > (await demoBalanceMinor(sql, s)))
      throw new InsufficientFundsError('the virtual balance does not cover this bet');
    const grant = b.free ? await takeGrant(sql, s, new Date(t)) : null;
    if (grant) amountMinor = grant.valueMinor;
    const [c] = await sql<{ bets: number; seq: string }[]>`
      insert into access_round_bets (operator_id, user_id, round_id, bets)
      values (${s.operator_id}, ${s.user_id}, ${roundId}, 1)
      on conflict (operator_id, user_id, round_id) do update set bets = access_round_bets.bets + 1
      returning bets, nextval('wallet_tx_seq') as seq`;
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
        count_register: c?.bets as number,
        demo: s.demo,
      },
      selection,
      placed_at: t,
    };
    try {
      await appendWalletEvents(producer, config, walletKey(event.bet), [{ type: 'BetPlaced', value: event }]);
    } catch (err) {
      if (grant)
        await sql`update free_bets set quantity_left = quantity_left + 1 where grant_id = ${grant.grantId}`;
      await sql`
        update access_round_bets set bets = bets - 1
        where operator_id = ${s.operator_id} and user_id = ${s.user_id} and round_id = ${roundId}`;
      throw err;
    }
    return reply.code(202).send({
      tx_id: event.tx_id,
      round_id: roundId,
      count_register: event.bet.count_register,
      mode: event.bet.mode,
      amount: toMajorNumber(amountMinor),
    });
  });
}
