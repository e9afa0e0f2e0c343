/**
 * Test support for the session-API integration tests (not a test file): the API with auth (real
 * broker and Postgres, own topic namespace and schema, tests/support/auth.ts) plus the
 * `access-sessions` and `wallet-transactions` topics, an operator factory, and readers that tell
 * whether anything was written (topic ends, decoded events, row counts).
 */
import { randomBytes } from 'node:crypto';
import type { LightMyRequestResponse } from 'fastify';
import { partitionOffsets, readRange } from '../../lib/log/kafka.ts';
import { ensureTopics, topicName } from '../../lib/log/topics.ts';
import {
  type AccessEvent,
  decodeAccessEvent,
  decodeWalletEvent,
  type WalletEvent,
} from '../../lib/log/wallet-events.ts';
import { type AuthTestApi, startAuthTestApi } from './auth.ts';

type Topic = 'accessSessions' | 'walletTransactions';

export interface AccessTestApi extends AuthTestApi {
  /** Sum of the high-water marks of a topic: unchanged means nothing was appended. */
  end(topic: Topic): Promise<bigint>;
  /** Every event of `access-sessions`, decoded, in offset order. */
  accessEvents(): Promise<AccessEvent[]>;
  /** Every event of `wallet-transactions`, decoded, in offset order. */
  walletEvents(): Promise<WalletEvent[]>;
  /** Registers an operator through POST /admin/operators. */
  operator(
    body?: Record<string, unknown>,
  ): Promise<{ operator_id: string; api_token: string; signing_secret: string }>;
  /** POST /games/request-access then POST /play/open; the player's bearer and the session. */
  player(
    apiToken: string,
    body?: Record<string, unknown>,
  ): Promise<{ token: string; sessionId: string; sessionToken: string }>;
  /** Rows of `table` (a fixed list of this test's tables). */
  count(table: 'access_sessions' | 'operators' | 'free_bets' | 'access_round_bets'): Promise<number>;
}

/** Starts the API; `overrides` are settings (environment variable names) of tests/support/config.ts. */
export async function startAccessTestApi(
  overrides: Record<string, string | number> = {},
): Promise<AccessTestApi> {
  const base = await startAuthTestApi({ PUBLIC_BASE_URL: 'http://play.test:8080', ...overrides });
  const admin = base.kafka.admin();
  await admin.connect();
  await ensureTopics(admin, base.config, ['accessSessions', 'walletTransactions']);
  await admin.disconnect();
  const end = async (t: Topic) => {
    const offs = await partitionOffsets(base.kafka, topicName(base.config, t));
    return [...offs.values()].reduce((s, o) => s + o.high, 0n);
  };
  const read = async <T>(t: Topic, decode: (b: Buffer | null) => T): Promise<T[]> => {
    const name = topicName(base.config, t);
    const offs = await partitionOffsets(base.kafka, name);
    const out: { p: number; o: bigint; v: T }[] = [];
    await readRange(base.kafka, name, new Map([...offs.keys()].map((p) => [p, 0n])), (r) => {
      out.push({ p: r.partition, o: BigInt(r.offset), v: decode(r.message.value) });
    });
    return out.sort((a, b) => a.p - b.p || Number(a.o - b.o)).map((x) => x.v);
  };
  const json = (res: LightMyRequestResponse) => res.json() as Record<string, unknown>;
  const api: AccessTestApi = {
    ...base,
    end,
    accessEvents: () => read('accessSessions', decodeAccessEvent),
    walletEvents: () => read('walletTransactions', decodeWalletEvent),
    async operator(body = {}) {
      const res = await base.app.inject({
        method: 'POST',
        url: '/admin/operators',
        headers: { 'x-api-key': base.adminKey },
        payload: {
          name: `op ${randomBytes(3).toString('hex')}`,
          callback_form: 'A',
          base_url: 'http://127.0.0.1:9',
          ...body,
        },
      });
      if (res.statusCode !== 201) throw new Error(`operator: ${res.statusCode} ${res.body}`);
      return json(res) as { operator_id: string; api_token: string; signing_secret: string };
    },
    async player(apiToken, body = {}) {
      const access = await base.app.inject({
        method: 'POST',
        url: '/games/request-access',
        headers: { authorization: `Bearer ${apiToken}` },
        payload: { game: 'crash', user_id: 'u1', username: 'Ann', ...body },
      });
      if (access.statusCode !== 200) throw new Error(`request-access: ${access.statusCode} ${access.body}`);
      const a = json(access) as { game_url: string; session_token: string };
      const launch = new URL(a.game_url).searchParams.get('launch');
      const opened = await base.app.inject({ method: 'POST', url: '/play/open', payload: { launch } });
      if (opened.statusCode !== 200) throw new Error(`open: ${opened.statusCode} ${opened.body}`);
      const o = json(opened) as { player_token: string; session: { session_id: string } };
      return { token: o.player_token, sessionId: o.session.session_id, sessionToken: a.session_token };
    },
    async count(table) {
      const [r] = await base.sql.unsafe<{ n: string }[]>(`select count(*) as n from ${table}`);
      return Number(r?.n ?? 0);
    },
    async close() {
      const a = base.kafka.admin();
      await a.connect();
      await a
        .deleteTopics({
          topics: [topicName(base.config, 'accessSessions'), topicName(base.config, 'walletTransactions')],
        })
        .catch(() => {});
      await a.disconnect();
      await base.close();
    },
  };
  return api;
}
