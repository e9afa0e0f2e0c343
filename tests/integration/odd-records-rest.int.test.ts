/**
 * The REST rounds window, the current-round route and the projector against odd records appended
 * straight to a real `rounds` topic (tests/support/odd-rounds.ts), as found from outside: a slot
 * round 4 ids ahead of the engine finished 10 minutes in the future froze `/api/latest/slot` and
 * `/api/history/slot` (later rounds missing until a restart while Postgres had them) and made
 * `/api/rounds/current/slot` say `between` while the engine's next round took bets. Also: a round
 * from year 0, a duplicate, a conflicting duplicate, a round of a lower id; and a future row that
 * an older projector already wrote to Postgres. Real Kafka, real Postgres, the projector and the
 * API's window feed in-process.
 */
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSql, type Sql } from '../../lib/db/pool.ts';
import { readHistory } from '../../lib/db/rounds-read.ts';
import { partitionOffsets, readRange } from '../../lib/log/kafka.ts';
import { createRoundPhases, type RoundPhases } from '../../lib/log/round-phases.ts';
import { encodeRoundEvent } from '../../lib/log/rounds-codec.ts';
import { createLogger } from '../../lib/logger.ts';
import type { RoundEvent } from '../../rules/rounds/round.ts';
import { errorBodySchema, problemBodySchema } from '../../services/api/errors.ts';
import { currentRoundRoutes } from '../../services/api/rounds/current.ts';
import { RoundsWindow } from '../../services/api/rounds/window.ts';
import { startWindowFeed, type WindowFeed } from '../../services/api/rounds/window-feed.ts';
import { buildRoundsProjector, type RoundsProjector } from '../../services/projector/projector.ts';
import { startTestApi, type TestApi } from '../support/api.ts';
import { FUTURE_LEAD_MS, oddScenario } from '../support/odd-rounds.ts';
import { waitFor } from '../support/poll.ts';
import { createTestEnv, sampleRound, type TestEnv } from '../support/projector.ts';

const logger = createLogger('odd-records-test', 'silent');
let env: TestEnv;
let api: TestApi; // the API with the window, as deployed
let window: RoundsWindow;
let feed: WindowFeed;
let listenSql: Sql;
let projector: RoundsProjector;
let phases: RoundPhases;
let current: FastifyInstance;

const append = (events: readonly RoundEvent[]) =>
  env.producer.send({
    topic: env.topic,
    acks: -1,
    messages: events.map((e) => ({ key: e.game_slug, value: encodeRoundEvent(e) })),
  });

interface HistoryRow {
  round_id: number;
  value: string;
}

const get = async <T>(url: string): Promise<T> => {
  const res = await api.app.inject(url);
  expect(res.statusCode, `${url}: ${res.body}`).toBe(200);
  return res.json() as T;
};

beforeAll(async () => {
  env = await createTestEnv('odd');
  window = new RoundsWindow();
  api = await startTestApi(
    {
      DATABASE_SCHEMA: env.config.db.schema,
      TOPIC_NAMESPACE: env.env.TOPIC_NAMESPACE as string,
      RATE_LIMIT_MAX: 100_000,
    },
    { migrated: false, roundsWindow: window },
  );
  listenSql = createSql(env.config, { max: 1 });
  feed = startWindowFeed({
    window,
    sql: api.sql,
    listenSql,
    schema: env.config.db.schema,
    logger,
    pollMs: 500,
  });
  await feed.started;
  projector = buildRoundsProjector({ config: env.config, kafka: env.kafka, sql: env.sql, logger });
  await projector.start();
  phases = createRoundPhases({ kafka: env.kafka, config: env.config, logger });
  await phases.start();
  current = Fastify();
  current.addSchema(errorBodySchema);
  current.addSchema(problemBodySchema);
  await current.register(currentRoundRoutes(phases));
  await current.ready();
});

afterAll(async () => {
  await current?.close();
  await phases?.stop();
  await projector?.stop();
  await feed?.stop();
  await listenSql?.end({ timeout: 5 });
  await api?.close();
  await env?.close();
});

describe('readers of rounds survive odd records', () => {
  it('REST latest and history keep every later slot round; the projector dead-letters the future, the past and the conflicting round with the reason', async () => {
    const s = oddScenario('slot', 100);
    const { future, past, duplicate, conflict, outOfOrder } = s.odd;
    await append([...s.before, future, past, duplicate, conflict, outOfOrder]);
    // The engine's rounds after the odd records come in later commits, as they did when found.
    await waitFor('the window to take the first commits', async () =>
      window.head(3) !== undefined ? true : undefined,
    );
    await append(s.after);
    const last = s.engine[8];
    await waitFor(
      '/api/latest/slot to show the engine’s last round',
      async () =>
        (await get<HistoryRow>('/api/latest/slot')).round_id === last?.round_id ? true : undefined,
      20_000,
    );
    const history = await get<HistoryRow[]>('/api/history/slot?limit=50');
    // Newest first: the engine's nine rounds, then the out-of-order one (finished 30 s earlier).
    expect(history.map((r) => r.round_id)).toEqual(
      [...s.engine]
        .reverse()
        .map((r) => r.round_id)
        .concat(s.odd.outOfOrder.round_id),
    );
    expect(history.map((r) => r.value)).not.toContain('999.00');
    // The window says what Postgres says.
    const fromDb = await readHistory(api.sql, [3], 50);
    expect(history.map((r) => r.round_id)).toEqual(fromDb.map((r) => r.round_id));

    const dead = await deadLetters();
    expect(dead.map((d) => d.reason.split(':')[0])).toEqual([
      'round refused (future)',
      'round refused (past)',
      'round refused (conflict)',
    ]);
    // Each at its own offset: the future round, year 0, then the conflicting duplicate (the plain
    // duplicate between them is no refusal).
    const [fo = 0, po = 0, co = 0] = dead.map((d) => Number(d.offset));
    expect([po - fo, co - po]).toEqual([1, 2]);
  });

  it('the current-round route follows the engine’s round after a round from the future', async () => {
    const s = oddScenario('double', 200);
    const [opened] = s.after;
    await append([...s.before, s.odd.future, s.odd.past, s.odd.duplicate, s.odd.conflict, s.odd.outOfOrder]);
    await append(opened ? [opened] : []);
    const body = await waitFor(
      '/api/rounds/current/double to show the engine’s next round',
      async () => {
        const b = (await current.inject('/api/rounds/current/double')).json() as {
          phase: string;
          round_id: number;
        };
        return b.round_id === opened?.round_id ? b : undefined;
      },
      10_000,
    );
    expect(body.phase).toBe('betting');
  });

  it('a lifecycle view started after odd records finds the engine’s open round (an API restarted then)', async () => {
    const s = oddScenario('crash', 600);
    const [opened] = s.after;
    const { future, past, duplicate, conflict } = s.odd;
    // The engine's round 603 is open; another producer's records come after its RoundOpened.
    await append([...s.before, ...(opened ? [opened] : []), future, past, duplicate, conflict]);
    await waitFor(
      'the running view to see the odd records',
      () => (phases.phase('crash')?.phase === 'betting' ? true : undefined),
      10_000,
    );
    const late = createRoundPhases({ kafka: env.kafka, config: env.config, logger });
    try {
      await late.start();
      expect(late.phase('crash')).toMatchObject({ phase: 'betting', opened: { round_id: opened?.round_id } });
      expect(phases.phase('crash')).toMatchObject({
        phase: 'betting',
        opened: { round_id: opened?.round_id },
      });
    } finally {
      await late.stop();
    }
  });

  it('REST keeps following a game whose newest row in Postgres finished in the future (written before the fix)', async () => {
    // An older projector took such a row (appended now, finished 10 minutes on): it is in Postgres
    // and sorts first there.
    const now = Date.now();
    const future = sampleRound('wall-street', 7, now + FUTURE_LEAD_MS);
    await env.sql`
      insert into rounds (game_id, round_id, game_slug, game_type, finished_at, value, extras, proof, appended_at)
      values (4, ${future.round_id}, 'wall-street', 'trending', ${new Date(future.finished_at)}, 'up',
              ${env.sql.json({ trending: 'up' })}, null, ${new Date(now)})`;
    await env.sql`select pg_notify('rounds_written', ${env.config.db.schema})`;
    await waitFor('the window to hold the future row', async () =>
      window.head(4)?.round_id === 4e12 + 7 ? true : undefined,
    );
    const later = [1, 2, 3].map((i) => sampleRound('wall-street', 7 + i, Date.now() + i));
    await append(later);
    const history = await waitFor(
      'the later wall-street rounds in /api/history/wall-street',
      async () => {
        const h = await get<HistoryRow[]>('/api/history/wall-street?limit=10');
        return h.length === 4 ? h : undefined;
      },
      20_000,
    );
    expect(history.map((r) => r.round_id)).toEqual([7, 10, 9, 8].map((s) => 4e12 + s));
    expect(history.map((r) => r.round_id)).toEqual(
      (await readHistory(api.sql, [4], 10)).map((r) => r.round_id),
    );
  });
});

async function deadLetters(): Promise<{ reason: string; offset: string }[]> {
  return await waitFor(
    'three dead letters',
    async () => {
      const offsets = await partitionOffsets(env.kafka, env.dlqTopic);
      const out: { reason: string; offset: string }[] = [];
      await readRange(
        env.kafka,
        env.dlqTopic,
        new Map([...offsets.keys()].map((p) => [p, 0n])),
        ({ message }) => {
          out.push({
            reason: String(message.headers?.['dlq-reason'] ?? ''),
            offset: String(message.headers?.['dlq-offset'] ?? ''),
          });
        },
      );
      return out.length >= 3 ? out.sort((a, b) => Number(a.offset) - Number(b.offset)) : undefined;
    },
    20_000,
  );
}
