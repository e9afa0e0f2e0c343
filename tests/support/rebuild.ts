/**
 * Test support for the rebuild's integration tests (not a test file): the whole read side of one
 * namespace and schema (the API with access control and the session API, the three live
 * projectors), traffic that keeps flowing while a rebuild runs (rounds, keys and wallet events
 * appended; REST reads of every swapped table, each failure recorded), and the checks after it:
 * caught up with the topics' ends, and equal to a fresh projection of the whole log.
 */
import { randomBytes } from 'node:crypto';
import { migrate } from '../../lib/db/migrate.ts';
import { createSql, type Sql } from '../../lib/db/pool.ts';
import { partitionOffsets } from '../../lib/log/kafka.ts';
import { ensureTopics, type TopicKey, topicName } from '../../lib/log/topics.ts';
import {
  appendWalletEvents,
  type BetContext,
  type WalletEvent,
  walletKey,
} from '../../lib/log/wallet-events.ts';
import { createLogger } from '../../lib/logger.ts';
import { READ_MODELS } from '../../lib/rebuild/models.ts';
import { checkpointsIn } from '../../lib/rebuild/shadow.ts';
import { buildAuthKeysProjector } from '../../services/projector/auth-keys/projector.ts';
import { buildRoundsProjector } from '../../services/projector/projector.ts';
import { buildWalletProjector } from '../../services/projector/wallet/projector.ts';
import { type AccessTestApi, startAccessTestApi } from './access.ts';
import { waitFor } from './poll.ts';
import { roundMessage, sampleRound } from './projector.ts';
import { placed, succeeded } from './settlement.ts';

const GAMES = ['crash', 'double', 'slot', 'wall-street'] as const;
const silent = createLogger('rebuild-test', 'silent');

/** The three live projectors of a schema. */
export interface LiveProjectors {
  stop(): Promise<void>;
}

/** Starts the rounds, auth-keys and wallet projectors on `config` (as services/projector/main.ts does). */
export async function startProjectors(
  t: Pick<AccessTestApi, 'config' | 'kafka'>,
  sql: Sql,
): Promise<LiveProjectors> {
  const deps = { config: t.config, kafka: t.kafka, sql, logger: silent };
  const all = [buildRoundsProjector(deps), buildAuthKeysProjector(deps), buildWalletProjector(deps)];
  for (const p of all) await p.start();
  return { stop: async () => void (await Promise.all(all.map((p) => p.stop()))) };
}

/** The environment: API, pool, an operator with one open session, counters of what was appended. */
export interface RebuildEnv {
  readonly t: AccessTestApi;
  /** Pool of the projectors and the rebuilds (the API has its own). */
  readonly sql: Sql;
  readonly operator: { operator_id: string; api_token: string };
  readonly session: BetContext;
  /** Round sequence appended last per game; rounds appended so far (decodable ones). */
  roundSeq: number;
  /** Bets appended (each: BetPlaced, its debit answer, BetSettled and, when won, the win's answer). */
  bets: number;
  /** Keys created through the API. */
  keys: number;
  close(): Promise<void>;
}

/** Starts the API (2 partitions, no practical rate limit) with an operator and one session. */
export async function startRebuildEnv(): Promise<RebuildEnv> {
  const t = await startAccessTestApi({ TOPIC_PARTITIONS: 2, RATE_LIMIT_MAX: 1_000_000 });
  const admin = t.kafka.admin();
  await admin.connect();
  await ensureTopics(admin, t.config, ['roundsDeadLetter']);
  await admin.disconnect();
  const sql = createSql(t.config, { max: 6 });
  const operator = await t.operator();
  const player = await t.player(operator.api_token, { user_id: 'rebuild-user' });
  const session = {
    ...placed(4, 'crash', 1).value.bet,
    session_id: player.sessionId,
    operator_id: operator.operator_id,
  };
  const env: RebuildEnv = {
    t,
    sql,
    operator,
    session,
    roundSeq: 0,
    bets: 0,
    keys: 0,
    async close() {
      await sql.end({ timeout: 5 });
      const a = t.kafka.admin();
      await a.connect();
      await a.deleteTopics({ topics: [topicName(t.config, 'roundsDeadLetter')] }).catch(() => {});
      await a.disconnect();
      await t.close();
    },
  };
  return env;
}

/** Appends `n` rounds of each game. */
export async function appendRounds(e: RebuildEnv, n: number): Promise<void> {
  const messages = [];
  for (let i = 0; i < n; i++) {
    e.roundSeq += 1;
    for (const g of GAMES)
      messages.push(roundMessage(sampleRound(g, e.roundSeq, Date.UTC(2026, 0, 1) + e.roundSeq * 1000)));
  }
  await e.t.producer.send({ topic: topicName(e.t.config, 'rounds'), acks: -1, messages });
}

/** Appends `n` bets of the session's player, every second one won. */
export async function appendBets(e: RebuildEnv, n: number): Promise<void> {
  const events: WalletEvent[] = [];
  for (let i = 0; i < n; i++) {
    e.bets += 1;
    const tx = 1000 + e.bets * 4;
    const bet = { ...e.session, round_id: 1_000_000_000_000 + e.bets, user_id: `u-${e.bets % 7}` };
    const won = e.bets % 2 === 0;
    events.push(
      { ...placed(tx, 'crash', e.bets), value: { ...placed(tx, 'crash', e.bets).value, bet } },
      succeeded(tx, 'bet', `${100 + e.bets}.00`),
      {
        type: 'BetSettled',
        value: {
          tx_id: tx,
          bet,
          outcome: won ? 'won' : 'lost',
          payout_minor: won ? 2000 : 0,
          win_tx_id: won ? tx + 1 : null,
          at: Date.UTC(2026, 5, 1) + e.bets,
        },
      },
    );
    if (won) events.push(succeeded(tx, 'win', `${120 + e.bets}.00`, 2000));
  }
  await appendWalletEvents(e.t.producer, e.t.config, walletKey(e.session), events);
}

/** Creates a key through POST /api/auth/keys (the API appends KeyCreated). */
export async function createKey(e: RebuildEnv): Promise<string> {
  const res = await e.t.app.inject({
    method: 'POST',
    url: '/api/auth/keys',
    headers: { 'x-api-key': e.t.adminKey },
    payload: { name: `k${e.keys}-${randomBytes(2).toString('hex')}`, scopes: ['read:games'] },
  });
  if (res.statusCode !== 201) throw new Error(`create key: ${res.statusCode} ${res.body}`);
  e.keys += 1;
  return (res.json() as { key: { id: string } }).key.id;
}

/** Traffic while a rebuild runs; `stop()` ends it and returns what happened. */
export interface Traffic {
  stop(): Promise<{ requests: number; failures: string[]; appendErrors: string[] }>;
}

/**
 * Starts appending (rounds every 40 ms, a bet every 60 ms, a key every 400 ms) and reading every
 * swapped table through REST (game list, history, latest, key list, session transactions).
 */
export function startTraffic(e: RebuildEnv): Traffic {
  let running = true;
  let requests = 0;
  const failures: string[] = [];
  const appendErrors: string[] = [];
  const loop = async (ms: number, f: () => Promise<unknown>) => {
    while (running) {
      await f().catch((err: unknown) => appendErrors.push(String(err)));
      await new Promise((r) => setTimeout(r, ms));
    }
  };
  const get = async (url: string, headers: Record<string, string> = {}) => {
    const res = await e.t.app.inject({ method: 'GET', url, headers });
    requests += 1;
    if (res.statusCode !== 200) failures.push(`${url}: ${res.statusCode} ${res.body.slice(0, 200)}`);
  };
  const reads = async () => {
    await get('/api/games');
    await get('/api/history/crash?limit=20');
    await get('/api/latest/double');
    await get('/api/history/type/multiplier?limit=10');
    await get('/api/auth/keys', { 'x-api-key': e.t.adminKey });
    await get(`/sessions/${e.session.session_id}/transactions?pageSize=20`, {
      authorization: `Bearer ${e.operator.api_token}`,
    });
  };
  const loops = [
    loop(40, () => appendRounds(e, 1)),
    loop(60, () => appendBets(e, 1)),
    loop(400, () => createKey(e)),
    loop(5, reads),
  ];
  return {
    async stop() {
      running = false;
      await Promise.all(loops);
      return { requests, failures, appendErrors };
    },
  };
}

const TOPICS: Record<string, TopicKey> = {
  rounds: 'rounds',
  'auth-keys': 'authKeys',
  wallet: 'walletTransactions',
};

/** Waits until every projection of `schema` has its checkpoints at its topic's ends. */
export async function waitCaughtUp(e: RebuildEnv, sql: Sql, schema: string): Promise<void> {
  for (const [projection, key] of Object.entries(TOPICS)) {
    const topic = topicName(e.t.config, key);
    await waitFor(
      `${projection} in ${schema} at the end of ${topic}`,
      async () => {
        const ends = await partitionOffsets(e.t.kafka, topic);
        const cps = await checkpointsIn(sql, schema, projection, topic);
        return [...ends].every(([p, o]) => o.high === (cps.get(p) ?? o.low)) ? true : undefined;
      },
      60_000,
      200,
    );
  }
}

/**
 * Projects the whole log afresh into a new schema (its own projectors and groups) and returns,
 * per swapped table, the rows that differ between it and the live schema (both ways, carried
 * columns left out), and the live row counts.
 */
export async function compareWithFresh(
  e: RebuildEnv,
): Promise<Record<string, { rows: number; differing: number }>> {
  const schema = `${e.t.config.db.schema}_fresh`;
  const config = {
    ...e.t.config,
    db: { ...e.t.config.db, schema },
    projector: { ...e.t.config.projector, group: `${e.t.config.projector.group}-fresh` },
  };
  const fresh = createSql(config, { max: 3 });
  try {
    await migrate(fresh, schema);
    const projectors = await startProjectors({ config, kafka: e.t.kafka }, fresh);
    try {
      await waitCaughtUp(e, fresh, schema);
    } finally {
      await projectors.stop();
    }
    const out: Record<string, { rows: number; differing: number }> = {};
    for (const model of READ_MODELS.values()) {
      for (const table of model.tables) {
        const skip = new Set(model.carried[table] ?? []);
        const cols = (
          await e.sql<{ c: string }[]>`
          select column_name as c from information_schema.columns
          where table_schema = ${e.t.config.db.schema} and table_name = ${table} order by ordinal_position`
        )
          .map((r) => `"${r.c}"`)
          .filter((c) => !skip.has(c.slice(1, -1)))
          .join(', ');
        const live = `"${e.t.config.db.schema}"."${table}"`;
        const other = `"${schema}"."${table}"`;
        const [r] = await e.sql.unsafe<{ rows: number; differing: number }[]>(
          `select (select count(*) from ${live})::int as rows,
             ((select count(*) from (select ${cols} from ${live} except all select ${cols} from ${other}) x)
            + (select count(*) from (select ${cols} from ${other} except all select ${cols} from ${live}) y))::int as differing`,
        );
        out[table] = r ?? { rows: -1, differing: -1 };
      }
    }
    return out;
  } finally {
    await fresh.unsafe(`drop schema if exists "${schema}" cascade`).catch(() => {});
    await fresh.end({ timeout: 5 });
  }
}

/** Schemas left by rebuilds of `schema` (shadow or retired). */
export async function leftoverSchemas(sql: Sql, schema: string): Promise<string[]> {
  const rows = await sql<{ n: string }[]>`
    select nspname as n from pg_namespace where nspname like ${`${schema}\\_\\_%`} order by 1`;
  return rows.map((r) => r.n);
}
