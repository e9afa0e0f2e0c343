/**
 * POST /games/request-access (docs/contract.md "Operator callbacks"): an operator, by its bearer, asks for a game URL for one
 * player. The session row is written first (it holds the one-time launch code's hash and the
 * session token, which must be unique), then SessionCreated is appended to `access-sessions`; if
 * the append fails the row is deleted again, so a failed request leaves neither (the caller gets
 * a 500 and may retry). Only hashes of the launch code are stored; the code itself is in the URL.
 */
import { randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import type { Producer } from 'kafkajs';
import { newLaunchCode, newSessionToken, sha256 } from '../../../lib/auth/secrets.ts';
import type { Sql } from '../../../lib/db/pool.ts';
import { appendAccessEvent, type SessionCreated } from '../../../lib/log/wallet-events.ts';
import { gameBySlug } from '../../../rules/games/catalog.ts';
import type { Currencies } from '../../../rules/money/currencies.ts';
import type { ApiConfig } from '../config.ts';
import { NotFoundError } from '../errors.ts';
import { requireOperator } from './guards.ts';
import { parseInput, requestAccessBody } from './input.ts';
import { currencyOf, demoStartMinor, minorOf } from './money.ts';
import type { ReadinessGate } from './readiness.ts';
import { sessionSchemas } from './schemas.ts';
import { deleteSession, insertSession } from './sessions-store.ts';

/** Language of a session that names none. */
export const DEFAULT_LANG = 'en';

export interface RequestAccessDeps {
  readonly config: Pick<ApiConfig, 'kafka' | 'access'>;
  readonly sql: Sql;
  readonly producer: Producer;
  readonly now: () => number;
  /** ISO 4217 + configured crypto currencies: the session's currency and the balance's precision. */
  readonly currencies: Currencies;
  /** Breaker closed and readiness probe passed, for real-money sessions. */
  readonly readiness: ReadinessGate;
}

/** Registers POST /games/request-access on `app`. */
export function requestAccessRoute(app: FastifyInstance, deps: RequestAccessDeps): void {
  const { sql, producer, config, now, currencies } = deps;
  app.post('/games/request-access', { schema: sessionSchemas.requestAccess }, async (req) => {
    const op = await requireOperator(sql, req);
    const b = parseInput(requestAccessBody, req.body, 'body');
    if (!gameBySlug(b.game)) throw new NotFoundError('GAME_NOT_FOUND', `unknown game ${b.game}`);
    const demo = b.demo || b.demo_session;
    // docs/contract.md "Operator callbacks": the callbacks "must be configured and working before the session endpoint is used".
    // A demo session calls no operator.
    if (!demo) await deps.readiness.check(op.operator_id, now());
    const currency = currencyOf(currencies, b.currency);
    const given = b.balance === undefined ? null : minorOf(currencies, b.balance, currency, 'balance');
    const createdAt = now();
    const event: SessionCreated = {
      session_id: randomUUID(),
      operator_id: op.operator_id,
      game: b.game,
      user_id: b.user_id,
      username: b.username,
      avatar_url: b.avatar_url ?? null,
      lang: b.lang ?? DEFAULT_LANG,
      currency,
      balance_minor: given ?? (demo ? demoStartMinor(currencies, currency) : null),
      extra_data: b.extra_data ?? null,
      demo: b.demo,
      demo_session: b.demo_session,
      expires_at: createdAt + b.expires_in_minutes * 60_000,
      created_at: createdAt,
    };
    const sessionToken = newSessionToken();
    const launch = newLaunchCode();
    await insertSession(sql, event, sessionToken, sha256(launch));
    try {
      await appendAccessEvent(producer, config, { type: 'SessionCreated', value: event });
    } catch (err) {
      await deleteSession(sql, event.session_id);
      throw err;
    }
    return {
      game_url: `${config.access.publicBaseUrl}/play/?launch=${launch}`,
      session_token: sessionToken,
    };
  });
}
