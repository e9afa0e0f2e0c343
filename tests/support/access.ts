/**
 * Test support for the session-API integration tests (not a test file): the API with auth (real
 * broker and Postgres, own topic namespace and schema, tests/support/auth.ts) plus the
 * `access-sessions` and `wallet-transactions` topics, an operator factory, and readers that tell
 * whether anything was written (topic ends, decoded events, row counts).
 */
import { randomBytes } from 'node:crypto';
import type { LightMyRequestResponse } from 'fastify';
import { partitionOffsets, readRange } from '../../lib/log/kafka.ts';
import { encodeRoundEvent } from '../../lib/log/rounds-codec.ts';
import { ensureTopics, topicName } from '../../lib/log/topics.ts';
import {
  type AccessEvent,
  decodeAccessEvent,
  decodeWalletEvent,
  type WalletEvent,
} from '../../lib/log/wallet-events.ts';
import { type GameSlug, gameBySlug } from '../../rules/games/catalog.ts';
import { ROUND_ID_BASE } from '../../rules/rounds/decider.ts';
import type { RoundEvent, RoundOpened } from '../../rules/rounds/round.ts';
import { type AuthTestApi, startAuthTestApi } from './auth.ts';
import { waitFor } from './poll.ts';

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
  count(
    table: 'access_sessions' | 'operators' | 'free_bets' | 'access_round_bets' | 'play_bets' | 'demo_wallets',
  ): Promise<number>;
  /**
   * Appends RoundOpened of `game`'s next round to this test's `rounds` topic (the engine's record)
   * with a betting window of `windowMs` from now, and waits until the API's phases see it.
   * @returns the round id.
   */
  openRound(game: GameSlug, windowMs?: number): Promise<number>;
  /** Appends BettingClosed of `game`'s open round (now) and waits until the API sees it running. */
  closeBetting(game: GameSlug): Promise<number>;
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
  const rounds = base.kafka.producer();
  await rounds.connect();
  const roundsTopic = topicName(base.config, 'rounds');
  const seq = new Map<GameSlug, number>();
  const opened = new Map<GameSlug, RoundOpened>();
  const appendRound = (e: RoundEvent) =>
    rounds.send({
      topic: roundsTopic,
      acks: -1,
      messages: [{ key: e.game_slug, value: encodeRoundEvent(e) }],
    });
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
      const o = json(res) as { operator_id: string; api_token: string; signing_secret: string };
      // Fixture: an operator whose readiness probe passed (its base_url answers
      // nothing here). Tests of readiness itself register operators through the admin API directly.
      await base.sql`update operators set ready = true, readiness_checked_at = now() where operator_id = ${o.operator_id}`;
      return o;
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
    async openRound(game, windowMs = 60_000) {
      const info = gameBySlug(game) as NonNullable<ReturnType<typeof gameBySlug>>;
      const n = (seq.get(game) ?? 0) + 1;
      seq.set(game, n);
      const now = Date.now();
      const o: RoundOpened = {
        type: 'RoundOpened',
        round_id: info.id * ROUND_ID_BASE + n,
        game_id: info.id,
        game_slug: game,
        game_type: info.type,
        betting_opens_at: now,
        betting_closes_at: now + windowMs,
        chain_epoch: 0,
        chain_index: n,
        commitment: 'c'.repeat(64),
        speed: 1,
      };
      opened.set(game, o);
      await appendRound(o);
      await waitFor(
        `round ${o.round_id} open`,
        () => {
          const p = base.phases.phase(game);
          return p?.phase === 'betting' && p.opened.round_id === o.round_id ? true : undefined;
        },
        10_000,
        10,
      );
      return o.round_id;
    },
    async closeBetting(game) {
      const o = opened.get(game);
      if (!o) throw new Error(`no round of ${game} opened by this test`);
      await appendRound({
        type: 'BettingClosed',
        round_id: o.round_id,
        game_id: o.game_id,
        game_slug: game,
        at: Date.now(),
      });
      await waitFor(
        `round ${o.round_id} running`,
        () => (base.phases.phase(game)?.phase === 'running' ? true : undefined),
        10_000,
        10,
      );
      return o.round_id;
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
      await rounds.disconnect();
      await base.close();
    },
  };
  return api;
}
