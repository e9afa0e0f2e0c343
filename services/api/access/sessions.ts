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
import { activeSessions, insertFreeBetGrant, isSessionOf, sessionTransactions } from './sessions-store.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

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
      if (!(await isSessionOf(sql, id, op.operator_id))) throw notFound;
      const { total: totalItems, rows } = await sessionTransactions(sql, id, {
        limit: pageSize,
        offset: (pageNumber - 1) * pageSize,
      });
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
    const rows = await activeSessions(sql, op.operator_id, new Date(t - PLAY_TTL_MS));
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
    const g = await insertFreeBetGrant(sql, {
      operatorId: op.operator_id,
      userId: b.user_id,
      game: b.game_slug,
      currency,
      valueMinor,
      quantity: b.quantity,
      bonusCode: b.bonus_code ?? null,
      expiresAt: expires,
    });
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
