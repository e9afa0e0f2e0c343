/**
 * Rebuilding each read model on a real broker and Postgres while its live projector runs, rounds,
 * bets and keys keep being appended and the REST API keeps answering reads of every swapped
 * table: no request fails, the rebuilt tables equal the live ones before and as of the swap, the
 * live projector goes on from the swapped-in checkpoints (nothing lost or doubled), and in the end
 * every read model equals a fresh projection of the whole log.
 */

import { PassThrough } from 'node:stream';
import { Kafka, logLevel } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSql } from '../../../lib/db/pool.ts';
import { partitionOffsets } from '../../../lib/log/kafka.ts';
import { topicName } from '../../../lib/log/topics.ts';
import { createLogger } from '../../../lib/logger.ts';
import { RebuildError } from '../../../lib/rebuild/errors.ts';
import { type RebuildProgress, type RebuildResult, rebuildReadModel } from '../../../lib/rebuild/rebuild.ts';
import { loadConfig } from '../../../tests/support/config.ts';
import { waitFor } from '../../../tests/support/poll.ts';
import {
  appendBets,
  appendRounds,
  compareWithFresh,
  createKey,
  type LiveProjectors,
  leftoverSchemas,
  type RebuildEnv,
  startProjectors,
  startRebuildEnv,
  startTraffic,
  waitCaughtUp,
} from '../../../tests/support/rebuild.ts';
import { runRebuildCli } from './cli.ts';

let e: RebuildEnv;
let live: LiveProjectors;
const logger = createLogger('rebuild-test', 'silent');

beforeAll(async () => {
  e = await startRebuildEnv();
  await appendRounds(e, 1000); // 4000 rounds
  // One record no decoder accepts: the live projector dead-letters it, a rebuild only skips it.
  await e.t.producer.send({
    topic: topicName(e.t.config, 'rounds'),
    acks: -1,
    messages: [{ key: 'crash', value: Buffer.from([0, 0, 0, 0x7f, 0x7f, 1]) }],
  });
  await appendBets(e, 300);
  for (let i = 0; i < 10; i++) await createKey(e);
  live = await startProjectors(e.t, e.sql);
  await waitCaughtUp(e, e.sql, e.t.config.db.schema);
}, 120_000);

afterAll(async () => {
  await live?.stop();
  await e?.close();
});

/** Runs a rebuild of `model` under traffic; checks what every rebuild must give. */
async function rebuildUnderTraffic(
  model: string,
): Promise<{ r: RebuildResult; progress: RebuildProgress[] }> {
  const traffic = startTraffic(e);
  const progress: RebuildProgress[] = [];
  let r: RebuildResult;
  try {
    await new Promise((res) => setTimeout(res, 300)); // traffic is flowing before the rebuild starts
    r = await rebuildReadModel({
      config: e.t.config,
      kafka: e.t.kafka,
      sql: e.sql,
      logger,
      model,
      swapLag: 50,
      onProgress: (p) => progress.push(p),
    });
    await new Promise((res) => setTimeout(res, 300)); // and after the swap
  } finally {
    const seen = await traffic.stop();
    expect(seen.failures).toEqual([]);
    expect(seen.appendErrors).toEqual([]);
    expect(seen.requests).toBeGreaterThan(20);
  }
  expect(r.swapped).toBe(true);
  expect(r.before.identical).toBe(true);
  expect(r.after?.identical).toBe(true);
  expect(r.after?.differences).toEqual([]);
  expect(r.retiredSchema).toBeNull();
  expect(await leftoverSchemas(e.sql, e.t.config.db.schema)).toEqual([]);
  const replay = progress.filter((p) => p.phase === 'replay');
  expect(replay.length).toBeGreaterThan(0);
  expect(replay.at(-1)).toMatchObject({ done: replay.at(-1)?.total });
  expect(progress.filter((p) => p.phase === 'step').map((p) => p.message)).toContain('swapping');
  return { r, progress };
}

/** Live checkpoints of `projection` summed, and the topic's end summed. */
async function positions(projection: string, key: 'rounds' | 'authKeys' | 'walletTransactions') {
  const topic = topicName(e.t.config, key);
  const [row] = await e.sql<{ n: string }[]>`
    select coalesce(sum("offset"), 0)::text as n from projection_checkpoints where projection = ${projection} and topic = ${topic}`;
  const end = [...(await partitionOffsets(e.t.kafka, topic)).values()].reduce((s, o) => s + o.high, 0n);
  return { checkpoint: BigInt(row?.n ?? 0), end };
}

describe('rebuild under traffic', () => {
  it('rebuilds rounds + games; the live projector continues from the swapped-in checkpoints', async () => {
    const { r } = await rebuildUnderTraffic('rounds');
    expect(r.records).toBeGreaterThanOrEqual(4001);
    expect(r.skipped).toBe(1);
    expect(r.after?.tables.map((t) => t.table)).toEqual(['rounds', 'games']);
    expect(r.after?.tables[0]?.liveRows).toBeGreaterThanOrEqual(4000);
    const atSwap = Object.values(r.checkpoints).reduce((s, o) => s + BigInt(o), 0n);
    // Rounds appended after the swap reach the swapped-in tables.
    await appendRounds(e, 5);
    await waitFor('the live projector past the swap', async () => {
      const p = await positions('rounds', 'rounds');
      return p.checkpoint === p.end && p.checkpoint >= atSwap + 20n ? true : undefined;
    });
    const [n] = await e.sql<{ n: number }[]>`select count(*)::int as n from rounds`;
    expect(n?.n).toBe(e.roundSeq * 4);
  });

  it('rebuilds api_keys and keeps last_used_at, which the API writes', async () => {
    const used = new Date('2026-03-04T05:06:07.000Z');
    await e.sql`update api_keys set last_used_at = ${used} where admin`;
    const { r } = await rebuildUnderTraffic('api-keys');
    expect(r.after?.tables).toEqual([
      expect.objectContaining({ table: 'api_keys', liveRows: r.after?.tables[0]?.rebuiltRows }),
    ]);
    const rows = await e.sql<{ at: Date | null }[]>`select last_used_at as at from api_keys where admin`;
    expect(rows.length).toBeGreaterThan(0);
    expect(rows.every((x) => x.at?.getTime() === used.getTime())).toBe(true);
    await createKey(e);
    await waitFor('the key projected after the swap', async () => {
      const p = await positions('auth-keys', 'authKeys');
      return p.checkpoint === p.end ? true : undefined;
    });
  });

  it('rebuilds wallet_transactions + wallet_balances', async () => {
    const { r } = await rebuildUnderTraffic('wallet');
    expect(r.events).toBeGreaterThanOrEqual(300 * 3);
    expect(r.after?.tables.map((t) => t.table)).toEqual(['wallet_transactions', 'wallet_balances']);
    await appendBets(e, 3);
    await waitFor('bets projected after the swap', async () => {
      const p = await positions('wallet', 'walletTransactions');
      return p.checkpoint === p.end ? true : undefined;
    });
    const [n] = await e.sql<{ n: number }[]>`select count(*)::int as n from wallet_transactions`;
    expect(n?.n).toBe(e.bets + Math.floor(e.bets / 2)); // a bet row each, a win row per won bet
  });

  it('after the rebuilds every read model equals a fresh projection of the whole log', async () => {
    await waitCaughtUp(e, e.sql, e.t.config.db.schema);
    // Dead-lettered once by the live projector; the rebuild never dead-letters.
    const dlq = await partitionOffsets(e.t.kafka, topicName(e.t.config, 'roundsDeadLetter'));
    expect([...dlq.values()].reduce((s, o) => s + o.high - o.low, 0n)).toBe(1n);
    const diff = await compareWithFresh(e);
    expect(diff).toEqual({
      rounds: { rows: e.roundSeq * 4, differing: 0 },
      games: { rows: 4, differing: 0 },
      api_keys: { rows: expect.any(Number), differing: 0 },
      wallet_transactions: { rows: e.bets + Math.floor(e.bets / 2), differing: 0 },
      wallet_balances: { rows: expect.any(Number), differing: 0 },
    });
    expect(diff.api_keys?.rows).toBeGreaterThanOrEqual(e.keys);
  }, 120_000);
});

describe('differences and bad input change nothing', () => {
  const run = (over: Partial<Parameters<typeof rebuildReadModel>[0]> = {}) =>
    rebuildReadModel({ config: e.t.config, kafka: e.t.kafka, sql: e.sql, logger, model: 'rounds', ...over });
  const liveState = async () => ({
    checkpoints:
      await e.sql`select projection, topic, "partition", "offset"::text from projection_checkpoints order by 1, 2, 3`,
    tables:
      await e.sql`select c.relname, c.oid::int from pg_class c join pg_namespace n on n.oid = c.relnamespace
      where n.nspname = ${e.t.config.db.schema} and c.relkind = 'r' order by 1`,
    leftovers: await leftoverSchemas(e.sql, e.t.config.db.schema),
  });
  const rejects = async (p: Promise<unknown>, code: string, message: RegExp) => {
    const err = await p.then(
      () => undefined,
      (x: unknown) => x,
    );
    expect(err).toBeInstanceOf(RebuildError);
    expect((err as RebuildError).code).toBe(code);
    expect((err as Error).message).toMatch(message);
  };

  it('a live table that differs from the log fails the check and swaps nothing; --accept-differences swaps and keeps the old tables', async () => {
    const id = 1_000_000_000_007; // crash round 7
    const [orig] = await e.sql<{ value: string }[]>`select value from rounds where round_id = ${id}`;
    await e.sql`update rounds set value = 'tampered' where round_id = ${id}`;
    const before = await liveState();
    const err = await run().catch((x: unknown) => x);
    expect(err).toBeInstanceOf(RebuildError);
    expect((err as RebuildError).code).toBe('DIFFERENCES');
    expect((err as RebuildError).comparison?.differences).toEqual([
      expect.objectContaining({
        table: 'rounds',
        kind: 'changed',
        key: { game_id: 1, round_id: id },
        columns: ['value'],
        live: expect.objectContaining({ value: 'tampered' }),
        rebuilt: expect.objectContaining({ value: orig?.value }),
      }),
    ]);
    expect(await liveState()).toEqual(before);

    const r = await run({ acceptDifferences: true });
    expect(r.swapped).toBe(true);
    expect(r.before.identical).toBe(false);
    expect(r.after?.tables.find((t) => t.table === 'rounds')?.differences).toBe(1);
    const [now] = await e.sql<{ value: string }[]>`select value from rounds where round_id = ${id}`;
    expect(now?.value).toBe(orig?.value);
    expect(r.retiredSchema).toBe(`${e.t.config.db.schema}__retired_rounds`);
    const [kept] = await e.sql.unsafe<{ value: string }[]>(
      `select value from "${r.retiredSchema}".rounds where round_id = ${id}`,
    );
    expect(kept?.value).toBe('tampered');
    // The next rebuild of the model drops the kept tables.
    const again = await run({ swap: false });
    expect(again.before.identical).toBe(true);
    expect(await leftoverSchemas(e.sql, e.t.config.db.schema)).toEqual([]);
  });

  it('refuses an unknown read model, an unreachable database or broker, a missing topic or tables, and a second rebuild', async () => {
    const before = await liveState();
    await rejects(
      run({ model: 'nope' }),
      'UNKNOWN_READ_MODEL',
      /unknown read model "nope"; one of: rounds, api-keys, wallet/,
    );

    const badDb = loadConfig(process.env, {
      DATABASE_URL: 'postgres://casino:casino@127.0.0.1:1/casino',
      DATABASE_SCHEMA: e.t.config.db.schema,
      TOPIC_NAMESPACE: e.t.config.kafka.topicNamespace,
    });
    const badSql = createSql(badDb, { max: 1 });
    await rejects(run({ config: badDb, sql: badSql }), 'DATABASE_UNREACHABLE', /cannot reach Postgres/);
    await badSql.end();

    const noBroker = new Kafka({
      clientId: 'rebuild-test',
      brokers: ['127.0.0.1:1'],
      retry: { retries: 0 },
      logLevel: logLevel.NOTHING,
    });
    await rejects(run({ kafka: noBroker }), 'BROKER_UNREACHABLE', /cannot reach the Kafka brokers/);

    const otherNs = { ...e.t.config, kafka: { ...e.t.config.kafka, topicNamespace: 'no-such-namespace-' } };
    await rejects(run({ config: otherNs }), 'TOPIC_MISSING', /topic no-such-namespace-rounds does not exist/);

    const empty = `${e.t.config.db.schema}_empty`;
    await e.sql.unsafe(`create schema "${empty}"`);
    try {
      const emptyConfig = { ...e.t.config, db: { ...e.t.config.db, schema: empty } };
      await rejects(
        run({ config: emptyConfig, model: 'wallet' }),
        'TABLES_MISSING',
        /wallet_transactions.* not found/,
      );
    } finally {
      await e.sql.unsafe(`drop schema "${empty}" cascade`);
    }

    const holder = await e.sql.reserve();
    try {
      await holder`select pg_advisory_lock(hashtext(${`rebuild:${e.t.config.db.schema}:api-keys`}))`;
      await rejects(run({ model: 'api-keys' }), 'REBUILD_RUNNING', /already running/);
    } finally {
      await holder`select pg_advisory_unlock_all()`;
      holder.release();
    }
    expect(await liveState()).toEqual(before);
  });
});

describe('the command line', () => {
  const run = async (...argv: string[]) => {
    const out: string[] = [];
    const stderr = new PassThrough();
    let err = '';
    stderr.on('data', (d: Buffer) => {
      err += d.toString();
    });
    const env = {
      ...process.env,
      TOPIC_NAMESPACE: e.t.config.kafka.topicNamespace,
      DATABASE_SCHEMA: e.t.config.db.schema,
      PROJECTOR_GROUP: e.t.config.projector.group,
    };
    const code = await runRebuildCli(
      argv,
      { out: (x) => out.push(x), stderr },
      { env, kafka: e.t.kafka, sql: e.sql, logger },
    );
    return { code, out: out.join('\n'), err };
  };

  it('checks without swapping, with plain progress lines off a terminal and a JSON summary', async () => {
    const oids = await e.sql`select c.oid::int from pg_class c join pg_namespace n on n.oid = c.relnamespace
      where n.nspname = ${e.t.config.db.schema} and c.relname in ('wallet_transactions', 'wallet_balances') order by 1`;
    const r = await run('wallet', '--no-swap');
    expect(r.code).toBe(0);
    expect(r.err).toMatch(/rebuild wallet: replay \d+\/\d+ records \(\d+%\), \d+ records\/s, ETA/);
    expect(r.err).toContain('before the swap: identical');
    expect(r.err).toContain('not swapped (--no-swap)');
    expect(JSON.parse(r.out)).toMatchObject({ ok: true, model: 'wallet', swapped: false, after: null });
    const same = await e.sql`select c.oid::int from pg_class c join pg_namespace n on n.oid = c.relnamespace
      where n.nspname = ${e.t.config.db.schema} and c.relname in ('wallet_transactions', 'wallet_balances') order by 1`;
    expect(same).toEqual(oids);
  });

  it('refuses an unknown read model or option with status 2 and a bad setting', async () => {
    const unknown = await run('games');
    expect(unknown.code).toBe(2);
    expect(unknown.err).toContain(
      "command-argument value 'games' is invalid for argument 'read-model'. Allowed choices are rounds, api-keys, wallet.",
    );
    expect((await run('rounds', '--lock-timeout-ms', 'soon')).code).toBe(2);
    const stderr = new PassThrough();
    let err = '';
    stderr.on('data', (d: Buffer) => {
      err += d.toString();
    });
    const bad = await runRebuildCli(
      ['rounds'],
      { out: () => {}, stderr },
      { env: { ...process.env, TOPIC_PARTITIONS: 'many' } },
    );
    expect(bad).toBe(2);
    expect(err).toContain('TOPIC_PARTITIONS');
    expect(await leftoverSchemas(e.sql, e.t.config.db.schema)).toEqual([]);
  });
});
