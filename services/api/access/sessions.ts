/**
 * Session endpoints named in docs/contract.md "Operator callbacks", shapes decided in docs/decisions/rest-api/0005-session-api.md (operator bearer on each):
 * GET /games, GET /sessions/:sessionId/transactions?pageSize&pageNumber (from the
 * wallet_transactions read model; another operator's session is a 404, never a 403, so session
 * ids cannot be probed), GET /sessions/active, POST /games/free-bets (a grant in `free_bets`).
 */
import type { FastifyInstance } from 'fastify';
import type { Sql } from '../../../lib/db/pool.ts';
import { GAMES, gameBySlug } from '../../../rules/games/catalog.ts';
import type { Currencies } from '../../../rules/money/currencies.ts';
import { InvalidInputError, NotFoundError } from '../errors.ts';
import { PLAY_TTL_MS, requireOperator } from './guards.ts';
import { freeBetBody, pageQuery, parseInput } from './input.ts';
import { amountOut, currencyOf, minorOf } from './money.ts';
import { sessionSchemas } from './schemas.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

interface TxRow {
  tx_id: string;
  kind: string;
  round_id: string;
  requested_at: Date;
  status: string;
  amount_minor: string;
  round_status: string;
  currency: string;
}

/** Registers the four session endpoints on `app`. */
export function sessionRoutes(
  app: FastifyInstance,
  deps: { sql: Sql; now: () => number; currencies: Currencies },
): void {
  const { sql, now } = deps;

  app.get('/games', { schema: sessionSchemas.games }, async (req) => {
    await requireOperator(sql, req);
    return { games: GAMES.map((g) => ({ id: g.id, slug: g.slug, name: g.name, type: g.type })) };
  });

  app.get<{ Params: { sessionId: string } }>(
    '/sessions/:sessionId/transactions',
    { schema: sessionSchemas.transactions },
    async (req) => {
      const op = await requireOperator(sql, req);
      const { pageSize, pageNumber } = parseInput(pageQuery, req.query, 'query');
      const id = req.params.sessionId;
      const notFound = new NotFoundError('SESSION_NOT_FOUND', `no session ${id}`);
      if (!UUID.test(id)) throw notFound;
      const [s] = await sql`
        select 1 from access_sessions where session_id = ${id} and operator_id = ${op.operator_id}`;
      if (!s) throw notFound;
      const [{ n } = { n: '0' }] = await sql<{ n: string }[]>`
        select count(*) as n from wallet_transactions where session_id = ${id}`;
      const rows = await sql<TxRow[]>`
        select tx_id, kind, round_id, requested_at, status, amount_minor, round_status, currency
        from wallet_transactions where session_id = ${id}
        order by requested_at, tx_id limit ${pageSize} offset ${(pageNumber - 1) * pageSize}`;
      const totalItems = Number(n);
      return {
        transactions: rows.map((r) => ({
          transactionId: Number(r.tx_id),
          roundId: r.round_id,
          transactionType: r.kind,
          requestedAt: r.requested_at.toISOString(),
          transactionStatus: r.status,
          amount: amountOut(deps.currencies, Number(r.amount_minor), r.currency),
          roundStatus: r.round_status,
        })),
        pagination: { pageSize, pageNumber, totalPages: Math.ceil(totalItems / pageSize), totalItems },
      };
    },
  );

  app.get('/sessions/active', { schema: sessionSchemas.active }, async (req) => {
    const op = await requireOperator(sql, req);
    const t = now();
    const rows = await sql<
      {
        session_id: string;
        game: string;
        user_id: string;
        username: string;
        currency: string;
        demo: boolean;
        created_at: Date;
        opened_at: Date;
      }[]
    >`
      select session_id, game, user_id, username, currency, demo or demo_session as demo, created_at, opened_at
      from access_sessions
      where operator_id = ${op.operator_id} and ended_at is null and opened_at > ${new Date(t - PLAY_TTL_MS)}
      order by opened_at desc limit 1000`;
    return {
      sessions: rows.map((r) => ({
        ...r,
        created_at: r.created_at.toISOString(),
        opened_at: r.opened_at.toISOString(),
        expires_at: new Date(r.opened_at.getTime() + PLAY_TTL_MS).toISOString(),
      })),
    };
  });

  app.post('/games/free-bets', { schema: sessionSchemas.freeBets }, async (req, reply) => {
    const op = await requireOperator(sql, req);
    const b = parseInput(freeBetBody, req.body, 'body');
    if (!gameBySlug(b.game_slug)) throw new NotFoundError('GAME_NOT_FOUND', `unknown game ${b.game_slug}`);
    const currency = currencyOf(deps.currencies, b.currency);
    const valueMinor = minorOf(deps.currencies, b.value, currency, 'value');
    const expires = new Date(b.expires_at);
    if (expires.getTime() <= now())
      throw new InvalidInputError('INVALID_INPUT', 'expires_at: must be in the future');
    const [g] = await sql<{ grant_id: string; created_at: Date }[]>`
      insert into free_bets (operator_id, user_id, game, currency, value_minor, quantity, quantity_left,
                             bonus_code, expires_at)
      values (${op.operator_id}, ${b.user_id}, ${b.game_slug}, ${currency}, ${valueMinor},
              ${b.quantity}, ${b.quantity}, ${b.bonus_code ?? null}, ${expires})
      returning grant_id, created_at`;
    return reply.code(201).send({
      grant_id: Number(g?.grant_id),
      game_slug: b.game_slug,
      user_id: b.user_id,
      quantity: b.quantity,
      quantity_left: b.quantity,
      value: b.value,
      currency: b.currency,
      expires_at: expires.toISOString(),
      bonus_code: b.bonus_code ?? null,
    });
  });
}
