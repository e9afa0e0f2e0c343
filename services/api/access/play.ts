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

export interface PlayDeps {
  readonly config: Pick<ApiConfig, 'kafka'>;
  readonly sql: Sql;
  readonly producer: Producer;
  readonly now: () => number;
  readonly fetchBalance: typeof fetchOperatorBalance;
  /** Balances and amounts in their currency's precision. */
  readonly currencies: Currencies;
}

interface OpenedRow {
  session_id: string;
  game: string;
  user_id: string;
  username: string;
  currency: string;
  demo: boolean;
  lang: string | null;
  avatar_url: string | null;
}

interface BetTxRow {
  tx_id: string;
  bet_tx_id: string;
  kind: string;
  status: string;
  round_status: string;
  round_id: string;
  amount_minor: string;
  currency: string;
  mode: string;
  requested_at: Date;
  updated_at: Date;
  new_balance: string | null;
  detail: string | null;
}

/** Registers the player routes of this file on `app`. */
export function playRoutes(app: FastifyInstance, deps: PlayDeps): void {
  const { sql, producer, config, now } = deps;

  app.post('/play/open', { schema: playSchemas.open }, async (req) => {
    const { launch } = parseInput(openBody, req.body, 'body');
    const hash = sha256(launch);
    const token = newPlayerToken();
    const at = new Date(now());
    const [s] = await sql<OpenedRow[]>`
      update access_sessions set opened_at = ${at}, player_token_hash = ${sha256(token)}
      where launch_hash = ${hash} and opened_at is null and expires_at > ${at}
      returning session_id, game, user_id, username, currency, demo or demo_session as demo, lang, avatar_url`;
    if (!s) {
      const [x] = await sql<{ opened_at: Date | null }[]>`
        select opened_at from access_sessions where launch_hash = ${hash}`;
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
      await sql`
        update access_sessions set opened_at = null, player_token_hash = null
        where session_id = ${s.session_id} and player_token_hash = ${sha256(token)}`;
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
      const rows = await sql<BetTxRow[]>`
        select tx_id, bet_tx_id, kind, status, round_status, round_id, amount_minor, currency, mode, requested_at,
               updated_at, new_balance, detail
        from wallet_transactions
        where bet_tx_id = ${Number(req.params.tx_id)} and session_id = ${s.session_id}
        order by tx_id`;
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
