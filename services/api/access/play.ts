/**
 * Player routes of the game page: POST /play/open consumes the game URL's
 * one-time launch code with one conditional update (`opened_at is null`), so of two simultaneous
 * first opens exactly one wins and the URL stops working at the first login (docs/contract.md "Operator callbacks"); GET
 * /play/balance; GET /play/bets/:tx_id (the bet's wallet_transactions rows, 404 until projected).
 * POST /play/bets is in bets.ts.
 */
import type { FastifyInstance } from 'fastify';
import type { Producer } from 'kafkajs';
import { newPlayerToken, sha256 } from '../../../lib/auth/secrets.ts';
import type { Sql } from '../../../lib/db/pool.ts';
import { appendAccessEvent } from '../../../lib/log/wallet-events.ts';
import type { Currencies } from '../../../rules/money/currencies.ts';
import type { ApiConfig } from '../config.ts';
import { GoneError, NotFoundError } from '../errors.ts';
import { type fetchOperatorBalance, playerBalance } from './balance.ts';
import { requirePlayer } from './guards.ts';
import { openBody, parseInput } from './input.ts';
import { amountOut } from './money.ts';
import { playSchemas } from './schemas.ts';
import { betTransactions, launchOpenedAt, openLaunch, reopenLaunch } from './sessions-store.ts';

export interface PlayDeps {
  readonly config: Pick<ApiConfig, 'kafka'>;
  readonly sql: Sql;
  readonly producer: Producer;
  readonly now: () => number;
  readonly fetchBalance: typeof fetchOperatorBalance;
  /** Balances and amounts in their currency's precision. */
  readonly currencies: Currencies;
}

/** Registers the player routes of this file on `app`. */
export function playRoutes(app: FastifyInstance, deps: PlayDeps): void {
  const { sql, producer, config, now } = deps;

  app.post('/play/open', { schema: playSchemas.open }, async (req) => {
    const { launch } = parseInput(openBody, req.body, 'body');
    const hash = sha256(launch);
    const token = newPlayerToken();
    const at = new Date(now());
    const s = await openLaunch(sql, hash, sha256(token), at);
    if (!s) {
      const x = await launchOpenedAt(sql, hash);
      if (!x) throw new NotFoundError('LAUNCH_NOT_FOUND', 'no game URL has this launch code');
      if (x.opened_at) throw new GoneError('LAUNCH_USED', 'this game URL was already used; it works once');
      throw new GoneError('LAUNCH_EXPIRED', 'this game URL has expired');
    }
    try {
      await appendAccessEvent(producer, config, {
        type: 'SessionOpened',
        value: { session_id: s.session_id, at: at.getTime() },
      });
    } catch (err) {
      // The player never got the token: give the URL back rather than leave it spent unrecorded.
      await reopenLaunch(sql, s.session_id, sha256(token));
      throw err;
    }
    return { player_token: token, session: { ...s } };
  });

  app.get('/play/balance', { schema: playSchemas.balance }, async (req) => {
    const s = await requirePlayer(sql, req, now());
    return playerBalance(deps, s);
  });

  app.get<{ Params: { tx_id: string } }>(
    '/play/bets/:tx_id',
    { schema: playSchemas.betStatus },
    async (req) => {
      const s = await requirePlayer(sql, req, now());
      const notYet = new NotFoundError('BET_NOT_FOUND', `no bet ${req.params.tx_id} of this session (yet)`);
      if (!/^\d{1,16}$/.test(req.params.tx_id)) throw notYet;
      const rows = await betTransactions(sql, Number(req.params.tx_id), s.session_id);
      if (rows.length === 0) throw notYet;
      return {
        transactions: rows.map((r) => ({
          tx_id: Number(r.tx_id),
          bet_tx_id: Number(r.bet_tx_id),
          kind: r.kind,
          status: r.status,
          round_status: r.round_status,
          round_id: r.round_id,
          amount: amountOut(deps.currencies, Number(r.amount_minor), r.currency),
          mode: r.mode,
          requested_at: r.requested_at.toISOString(),
          updated_at: r.updated_at.toISOString(),
          new_balance: r.new_balance,
          detail: r.detail,
        })),
      };
    },
  );
}
