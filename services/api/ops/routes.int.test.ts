/**
 * The ops console's API (/admin/ops/*) on a real broker and Postgres, in a namespace and schema of
 * its own: topics with their watermarks, a consumer group whose lag grows when records are appended
 * and falls when it commits, a dead letter listed, inspected and replayed (once), a rebuild started,
 * followed and swapped, a real edge with an SSE subscriber beside an unreachable one, and the
 * refusals: no key 401, a key without admin 403, bad input 400 naming the field, unknown names 404.
 */
import type { Consumer } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSql, type Sql } from '../../../lib/db/pool.ts';
import { deadLetterMessage } from '../../../lib/log/dead-letter.ts';
import { ensureTopics, topicName } from '../../../lib/log/topics.ts';
import { createLogger } from '../../../lib/logger.ts';
import { type AuthTestApi, startAuthTestApi } from '../../../tests/support/auth.ts';
import { createTestLog, startEdge, type TestLog } from '../../../tests/support/edge.ts';
import { waitFor } from '../../../tests/support/poll.ts';
import { roundMessage, sampleRound } from '../../../tests/support/projector.ts';
import { type LiveProjectors, startProjectors } from '../../../tests/support/rebuild.ts';
import { openSse, type SseClient } from '../../../tests/support/sse-client.ts';
import { createRebuildJobs } from './rebuilds.ts';

type Edge = Awaited<ReturnType<typeof startEdge>>;

let t: AuthTestApi;
let log: TestLog;
let edge: Edge;
let sse: SseClient;
const T0 = Date.UTC(2026, 0, 1);

beforeAll(async () => {
  // A real edge with one SSE subscriber; the API reads it and an address where nothing listens.
  log = await createTestLog();
  edge = await startEdge(log);
  sse = await openSse(edge.httpPort, '/sse/crash');
  t = await startAuthTestApi({
    OPS_EDGE_URLS: `http://127.0.0.1:${edge.httpPort},http://127.0.0.1:1`,
    OPS_EDGE_TIMEOUT_MS: 1000,
  });
  const admin = t.kafka.admin();
  await admin.connect();
  await ensureTopics(admin, t.config, ['roundsDeadLetter', 'walletDeadLetter']);
  await admin.disconnect();
}, 60_000);

afterAll(async () => {
  sse?.close();
  await edge?.stop(0);
  await log?.close();
  const admin = t?.kafka.admin();
  if (admin) {
    await admin.connect();
    const topics = (
      ['roundsDeadLetter', 'walletDeadLetter', 'deadLetterReplays', 'walletTransactions'] as const
    ).map((k) => topicName(t.config, k));
    await admin.deleteTopics({ topics }).catch(() => {});
    await admin.disconnect();
  }
  await t?.close();
});

const get = (url: string, key: string | null = t.adminKey) =>
  t.app.inject({ method: 'GET', url, headers: key ? { authorization: `Bearer ${key}` } : {} });
const post = (url: string, payload: unknown, key: string | null = t.adminKey) =>
  t.app.inject({
    method: 'POST',
    url,
    payload: payload as object,
    headers: key ? { authorization: `Bearer ${key}` } : {},
  });

const rounds = () => topicName(t.config, 'rounds');
const appendRounds = async (n: number, from: number) =>
  t.producer.send({
    topic: rounds(),
    acks: -1,
    messages: Array.from({ length: n }, (_, i) => roundMessage(sampleRound('crash', from + i, T0 + i))),
  });

describe('ops console API: access', () => {
  it('answers 401 without a key and 403 with a key that lacks admin, as problem JSON', async () => {
    const none = await get('/admin/ops/topics', null);
    expect(none.statusCode).toBe(401);
    expect(none.headers['content-type']).toMatch(/^application\/problem\+json/);
    const created = await post('/api/auth/keys', { name: 'ops-reader', scopes: ['read:games'] });
    expect(created.statusCode).toBe(201);
    const reader = created.json().secret as string;
    for (const url of [
      '/admin/ops/topics',
      '/admin/ops/consumer-groups',
      '/admin/ops/dead-letters',
      '/admin/ops/edges',
    ]) {
      const r = await get(url, reader);
      expect(r.statusCode, url).toBe(403);
      expect(r.json()).toMatchObject({ status: 403, code: 'FORBIDDEN' });
    }
    expect((await post('/admin/ops/rebuilds', { read_model: 'rounds' }, reader)).statusCode).toBe(403);
  });
});

describe('ops console API: topics and consumer groups', () => {
  it('lists the namespace topics with leader, replicas, ISR and watermarks that move with appends', async () => {
    const before = (await get('/admin/ops/topics')).json();
    const names = before.topics.map((x: { name: string }) => x.name);
    expect(names).toContain(rounds());
    expect(names.every((n: string) => n.startsWith(t.config.kafka.topicNamespace))).toBe(true);
    const p0 = before.topics.find((x: { name: string }) => x.name === rounds()).partitions[0];
    expect(p0).toMatchObject({ partition: 0, low_water_mark: 0 });
    expect(p0.leader).toBeGreaterThanOrEqual(0);
    expect(p0.replicas).toContain(p0.leader);
    expect(p0.isr).toContain(p0.leader);
    await appendRounds(3, 1);
    const after = (await get('/admin/ops/topics')).json();
    const q0 = after.topics.find((x: { name: string }) => x.name === rounds()).partitions[0];
    expect(q0.high_water_mark).toBe(p0.high_water_mark + 3);
  });

  it("shows a group's lag per partition: it grows with appends and falls when the group commits", async () => {
    const groupId = `${t.config.kafka.topicNamespace}ops-reader`;
    const high = async () =>
      (await get('/admin/ops/topics')).json().topics.find((x: { name: string }) => x.name === rounds())
        .partitions[0].high_water_mark as number;
    /** Consumes the topic to its end, committing after each record, then leaves the group. */
    const consumeAll = async () => {
      const end = await high();
      const consumer: Consumer = t.kafka.consumer({ groupId, maxWaitTimeInMs: 100 });
      await consumer.connect();
      await consumer.subscribe({ topics: [rounds()], fromBeginning: true });
      let next = -1;
      await consumer.run({
        autoCommit: false,
        eachMessage: async ({ topic, partition, message }) => {
          next = Number(message.offset) + 1;
          await consumer.commitOffsets([{ topic, partition, offset: String(next) }]);
        },
      });
      await waitFor('consumed to the end', async () => (next >= end ? true : undefined), 30_000);
      await consumer.disconnect();
      return end;
    };
    const groupOf = async () =>
      (await get('/admin/ops/consumer-groups'))
        .json()
        .groups.find((g: { group_id: string }) => g.group_id === groupId);

    await appendRounds(2, 50); // something to consume, whatever ran before
    const end = await consumeAll();
    const g1 = await groupOf();
    expect(g1).toMatchObject({ group_id: groupId, members: 0, total_lag: 0 });
    expect(g1.topics).toEqual([
      {
        topic: rounds(),
        partitions: [{ partition: 0, committed_offset: end, high_water_mark: end, lag: 0 }],
      },
    ]);

    await appendRounds(5, 100);
    const g2 = await groupOf();
    expect(g2.total_lag).toBe(5);
    expect(g2.topics[0].partitions[0]).toEqual({
      partition: 0,
      committed_offset: end,
      high_water_mark: end + 5,
      lag: 5,
    });

    const end2 = await consumeAll();
    const g3 = await groupOf();
    expect(g3.total_lag).toBe(0);
    expect(g3.topics[0].partitions[0]).toMatchObject({ committed_offset: end2, lag: 0 });
    // Only groups on this namespace's topics: none of another namespace's groups shows.
    const all = (await get('/admin/ops/consumer-groups')).json().groups;
    for (const g of all)
      for (const x of g.topics) expect(x.topic.startsWith(t.config.kafka.topicNamespace)).toBe(true);
  }, 90_000);
});

describe('ops console API: dead letters', () => {
  it('lists a dead letter, shows it decoded with its reason and source, and replays it once', async () => {
    const dlq = topicName(t.config, 'roundsDeadLetter');
    const fixable = roundMessage(sampleRound('double', 7, T0 + 7000));
    await t.producer.send({
      topic: dlq,
      acks: -1,
      messages: [
        deadLetterMessage(
          {
            message: { ...fixable, offset: '41', timestamp: String(T0), attributes: 0, headers: {} } as never,
            reason: 'unknown schema id 1',
          },
          { topic: rounds(), partition: 0, projection: 'rounds' },
        ),
      ],
    });

    const list = (await get('/admin/ops/dead-letters')).json();
    expect(list.topics).toContainEqual({
      name: 'rounds',
      topic: dlq,
      source_topic: rounds(),
      count: 1,
      exists: true,
    });

    const page = await get('/admin/ops/dead-letters/rounds?limit=10');
    expect(page.statusCode).toBe(200);
    const [rec] = page.json().records;
    expect(rec).toMatchObject({
      partition: 0,
      offset: 0,
      key: 'double',
      reason: 'unknown schema id 1',
      source: { topic: rounds(), partition: 0, offset: 41 },
      value_encoding: 'json',
      decode_error: null,
      replays: [],
    });
    expect(rec.headers['dlq-projection']).toBe('rounds');
    expect(rec.value).toMatchObject({ game_slug: 'double' });
    // The full topic name works too, and a page after the last record is empty.
    expect((await get(`/admin/ops/dead-letters/${dlq}`)).json().records).toHaveLength(1);
    expect((await get('/admin/ops/dead-letters/rounds?after=0:0')).json().records).toEqual([]);

    const sourceEnd = async () => {
      const a = t.kafka.admin();
      await a.connect();
      try {
        return Number((await a.fetchTopicOffsets(rounds()))[0]?.high);
      } finally {
        await a.disconnect();
      }
    };
    const end = await sourceEnd();
    const first = await post('/admin/ops/dead-letters/rounds/replay', {
      records: [{ partition: 0, offset: 0 }],
    });
    expect(first.statusCode).toBe(200);
    expect(first.json()).toEqual({
      topic: dlq,
      target: rounds(),
      replayed: [{ partition: 0, offset: 0, to: { partition: 0, offset: end } }],
      already_replayed: [],
      undecodable: [],
    });
    // The ledger makes the replay idempotent: asked again, nothing is appended.
    const second = await post('/admin/ops/dead-letters/rounds/replay', {
      records: [{ partition: 0, offset: 0 }],
    });
    expect(second.json()).toMatchObject({ replayed: [], already_replayed: [{ partition: 0, offset: 0 }] });
    expect(await sourceEnd()).toBe(end + 1);
    const replays = (await get('/admin/ops/dead-letters/rounds')).json().records[0].replays;
    expect(replays).toEqual([{ to: { topic: rounds(), partition: 0, offset: end }, at: expect.any(String) }]);
  });

  it('answers 404 for an unknown topic or record and 400 naming the field of bad input', async () => {
    const unknown = await get('/admin/ops/dead-letters/no-such-topic');
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json()).toMatchObject({ code: 'TOPIC_NOT_FOUND' });
    expect(unknown.json().detail).toMatch(/no-such-topic/);
    const noRecord = await post('/admin/ops/dead-letters/rounds/replay', {
      records: [{ partition: 0, offset: 999 }],
    });
    expect(noRecord.statusCode).toBe(404);
    expect(noRecord.json()).toMatchObject({ code: 'RECORD_NOT_FOUND' });

    const cases: [string, () => ReturnType<typeof get>, RegExp][] = [
      ['limit 0', () => get('/admin/ops/dead-letters/rounds?limit=0'), /^limit: /],
      ['limit text', () => get('/admin/ops/dead-letters/rounds?limit=ten'), /^limit: /],
      ['limit 1001', () => get('/admin/ops/dead-letters/rounds?limit=1001'), /^limit: /],
      ['after', () => get('/admin/ops/dead-letters/rounds?after=3'), /^after: /],
      ['unknown query', () => get('/admin/ops/dead-letters/rounds?colour=red'), /colour/],
      ['topic', () => get('/admin/ops/dead-letters/a%20b'), /^topic: /],
      ['records empty', () => post('/admin/ops/dead-letters/rounds/replay', { records: [] }), /^records: /],
      [
        'offset type',
        () => post('/admin/ops/dead-letters/rounds/replay', { records: [{ partition: 0, offset: '1' }] }),
        /^records\.0\.offset: /,
      ],
      [
        'unknown field',
        () =>
          post('/admin/ops/dead-letters/rounds/replay', {
            records: [{ partition: 0, offset: 0 }],
            force: true,
          }),
        /^force: unknown field/,
      ],
      ['read model', () => post('/admin/ops/rebuilds', { read_model: 'bets' }), /^read_model: /],
      ['rebuild id', () => get('/admin/ops/rebuilds/42'), /^id: /],
    ];
    for (const [name, call, detail] of cases) {
      const r = await call();
      expect(r.statusCode, name).toBe(400);
      expect(r.json().detail, name).toMatch(detail);
    }
  });
});

describe('ops console API: rebuilds', () => {
  let live: LiveProjectors;
  let sql: Sql;

  beforeAll(async () => {
    sql = createSql(t.config, { max: 4 });
    live = await startProjectors(t, sql);
  }, 60_000);

  afterAll(async () => {
    await live?.stop();
    await sql?.end({ timeout: 5 });
  });

  it('starts a rebuild, shows its progress, refuses a second one, and swaps it in on request', async () => {
    for (let i = 0; i < 5; i++)
      expect(
        (await post('/api/auth/keys', { name: `ops-rebuild-${i}`, scopes: ['read:games'] })).statusCode,
      ).toBe(201);
    // The live projector has the admin key, the reader key and these five.
    await waitFor('api_keys projected', async () => {
      const [r] = await sql<{ n: number }[]>`select count(*)::int as n from api_keys`;
      return (r?.n ?? 0) >= 7 ? true : undefined;
    });

    const started = await post('/admin/ops/rebuilds', { read_model: 'api-keys' });
    expect(started.statusCode).toBe(202);
    const id = started.json().rebuild_id as string;
    expect(started.json()).toMatchObject({ read_model: 'api-keys', error: null, finished_at: null });
    expect(['running', 'caught-up']).toContain(started.json().state);

    const again = await post('/admin/ops/rebuilds', { read_model: 'api-keys' });
    expect(again.statusCode).toBe(409);
    expect(again.json()).toMatchObject({ code: 'REBUILD_RUNNING' });

    const caught = await waitFor(
      'caught up',
      async () => {
        const r = (await get(`/admin/ops/rebuilds/${id}`)).json();
        if (r.state === 'failed') throw new Error(JSON.stringify(r.error));
        return r.state === 'caught-up' ? r : undefined;
      },
      60_000,
    );
    expect(caught.progress.replayed).toBeGreaterThanOrEqual(7);
    expect(caught.progress.replayed).toBe(caught.progress.target);
    expect(caught.progress.step).toMatch(/waiting for the swap/);
    expect(
      (await get('/admin/ops/rebuilds')).json().rebuilds.map((r: { rebuild_id: string }) => r.rebuild_id),
    ).toContain(id);

    const swapped = await post(`/admin/ops/rebuilds/${id}/swap`, undefined);
    expect(swapped.statusCode).toBe(200);
    expect(swapped.json()).toMatchObject({
      rebuild_id: id,
      state: 'swapped',
      error: null,
      result: { identical_after_swap: true, retired_schema: null },
    });
    expect(swapped.json().result.records).toBeGreaterThanOrEqual(7);
    // The swapped-in table serves the listing.
    const [n] = await sql<{ n: number }[]>`select count(*)::int as n from api_keys`;
    expect(n?.n).toBeGreaterThanOrEqual(7);

    const twice = await post(`/admin/ops/rebuilds/${id}/swap`, undefined);
    expect(twice.statusCode).toBe(409);
    expect(twice.json()).toMatchObject({ code: 'REBUILD_NOT_SWAPPABLE' });
    const missing = await get('/admin/ops/rebuilds/rb_00000000-0000-0000-0000-000000000000');
    expect(missing.statusCode).toBe(404);
    expect(missing.json()).toMatchObject({ code: 'REBUILD_NOT_FOUND' });
  }, 120_000);

  it('ends a rebuild waiting for its swap when the API stops: failed CANCELLED, nothing swapped, shadow dropped', async () => {
    const jobs = createRebuildJobs({
      config: t.config,
      kafka: t.kafka,
      logger: createLogger('ops-test', 'silent'),
    });
    const { rebuild_id: id } = await jobs.start('api-keys');
    await waitFor('caught up', () => (jobs.get(id).state === 'caught-up' ? true : undefined), 60_000);
    const before = await sql<{ key_id: string }[]>`select key_id from api_keys order by key_id`;
    await jobs.close();
    expect(jobs.get(id)).toMatchObject({ state: 'failed', error: { code: 'CANCELLED' }, result: null });
    const shadow = `${t.config.db.schema}__rebuild_api_keys`;
    const [s] = await sql<
      { n: number }[]
    >`select count(*)::int as n from pg_namespace where nspname = ${shadow}`;
    expect(s?.n).toBe(0);
    expect(await sql<{ key_id: string }[]>`select key_id from api_keys order by key_id`).toEqual(before);
    // Its lock is released: the next rebuild of the same model starts.
    const next = await post('/admin/ops/rebuilds', { read_model: 'api-keys' });
    expect(next.statusCode).toBe(202);
    await waitFor('caught up', async () =>
      (await get(`/admin/ops/rebuilds/${next.json().rebuild_id}`)).json().state === 'caught-up'
        ? true
        : undefined,
    );
  }, 120_000);
});

describe('ops console API: edges', () => {
  it('reads each edge’s readiness and subscribers per protocol; an unreachable edge is not ready, with the error', async () => {
    const r = await get('/admin/ops/edges');
    expect(r.statusCode).toBe(200);
    const [local, away] = r.json().edges;
    expect(local).toEqual({
      url: `http://127.0.0.1:${edge.httpPort}`,
      ready: true,
      status: 'ready',
      subscribers: { websocket: 0, sse: 1, grpc: 0, webtransport: 0 },
      error: null,
    });
    expect(away).toMatchObject({ url: 'http://127.0.0.1:1', ready: false, subscribers: null });
    expect(away.error).toMatch(/unreachable|no answer/);
  });
});

describe('ops console API: /openapi.json', () => {
  it('documents every ops route with its summary and tag', async () => {
    const doc = (await t.app.inject('/openapi.json')).json();
    for (const [path, method] of [
      ['/admin/ops/topics', 'get'],
      ['/admin/ops/consumer-groups', 'get'],
      ['/admin/ops/dead-letters', 'get'],
      ['/admin/ops/dead-letters/{topic}', 'get'],
      ['/admin/ops/dead-letters/{topic}/replay', 'post'],
      ['/admin/ops/rebuilds', 'post'],
      ['/admin/ops/rebuilds', 'get'],
      ['/admin/ops/rebuilds/{id}', 'get'],
      ['/admin/ops/rebuilds/{id}/swap', 'post'],
      ['/admin/ops/edges', 'get'],
    ] as const) {
      const op = doc.paths[path]?.[method];
      expect(op, `${method} ${path}`).toBeDefined();
      expect(op.tags).toEqual(['ops-console']);
      expect(op.summary.length).toBeGreaterThan(5);
      expect(op.responses['401']).toBeDefined();
    }
  });
});
