/**
 * The rounds projector in-process against the real broker and Postgres: rows and game list from
 * a produced log, checkpoint equal to the high-water mark, dead-lettering of undecodable records.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { encode } from '../../lib/log/codec.ts';
import { partitionOffsets, readRange } from '../../lib/log/kafka.ts';
import { encodeRound } from '../../lib/log/rounds-codec.ts';
import { createLogger } from '../../lib/logger.ts';
import { ROUNDS_PROJECTION } from '../../lib/projections/specs.ts';
import { GAMES } from '../../rules/games/catalog.ts';
import type { RoundFinished } from '../../rules/rounds/round.ts';
import { loadConfig } from '../../tests/support/config.ts';
import { sampleValue } from '../../tests/support/metrics.ts';
import { waitFor } from '../../tests/support/poll.ts';
import {
  createTestEnv,
  produceAll,
  roundMessage,
  sampleRound,
  sampleRounds,
  type TestEnv,
} from '../../tests/support/projector.ts';
import { buildRoundsProjector, type RoundsProjector } from './projector.ts';

const logger = createLogger('test', 'error');
const T0 = Date.UTC(2026, 0, 1);
let env: TestEnv | undefined;
const running: RoundsProjector[] = [];

function startProjector(e: TestEnv): Promise<RoundsProjector> {
  const p = buildRoundsProjector({ config: e.config, kafka: e.kafka, sql: e.sql, logger });
  running.push(p);
  return p.start().then(() => p);
}

/** Waits until the stored checkpoints equal the high-water marks of every partition. */
async function caughtUp(e: TestEnv): Promise<Map<number, bigint>> {
  const high = new Map([...(await partitionOffsets(e.kafka, e.topic))].map(([p, o]) => [p, o.high]));
  return await waitFor('checkpoints at the high-water marks', async () => {
    const rows = await e.sql<{ partition: number; offset: string }[]>`
      select "partition", "offset"::text as "offset" from projection_checkpoints where projection = ${ROUNDS_PROJECTION}`;
    const cps = new Map(rows.map((r) => [r.partition, BigInt(r.offset)]));
    return [...high].every(([p, h]) => h === 0n || cps.get(p) === h) ? cps : undefined;
  });
}

afterEach(async () => {
  for (const p of running.splice(0)) await p.stop();
  await env?.close();
  env = undefined;
});

const KEY_DELETED = 'casino.auth.KeyDeleted';

describe('rounds projector', () => {
  it('projects every RoundFinished into history rows and the game list, checkpoint = high-water', async () => {
    env = await createTestEnv('proj');
    const e = env;
    const perGame = 250;
    const rounds = sampleRounds(perGame, T0);
    // Old rounds appended again after the newest: a replay must neither add rows nor move the list back.
    const replayed = GAMES.map((g) => sampleRound(g.slug, 1, T0 + 1000 + g.id));
    await produceAll(e.producer, e.topic, [...rounds, ...replayed].map(roundMessage));
    const high = await partitionOffsets(e.kafka, e.topic);

    const projector = await startProjector(e);
    const cps = await caughtUp(e);
    for (const [p, o] of high) expect(cps.get(p) ?? 0n).toBe(o.high);

    const [count] = await e.sql<{ n: number; d: number }[]>`
      select count(*)::int as n, count(distinct (game_id, round_id))::int as d from rounds`;
    expect(count).toEqual({ n: rounds.length, d: rounds.length });
    const games = await e.sql<{ slug: string; last_round: string; last_update: Date }[]>`
      select slug, last_round::text, last_update from games order by id`;
    expect(games).toEqual(
      GAMES.map((g) => ({
        slug: g.slug,
        last_round: String(g.id * 1_000_000_000_000 + perGame),
        last_update: new Date(T0 + perGame * 1000 + g.id),
      })),
    );

    const double7 = sampleRound('double', 7, T0 + 7000 + 2);
    const [row] = await e.sql`
      select game_slug, game_type, finished_at, value, extras, jsonb_typeof(extras) as kind, proof, appended_at
      from rounds where game_id = 2 and round_id = ${double7.round_id}`;
    expect(row).toMatchObject({
      game_slug: 'double',
      game_type: 'color',
      finished_at: new Date(double7.finished_at),
      value: 'red',
      extras: { color: 'red', number: 7 },
      kind: 'object',
      proof: null,
    });
    const appendedAt = row?.appended_at as Date | undefined;
    expect(appendedAt).toBeInstanceOf(Date);
    expect(appendedAt?.getTime() ?? 0).toBeGreaterThan(Date.now() - 120_000);

    expect(projector.ready()).toBe(true);
    expect([...(await projector.lag()).values()].every((n) => n === 0n)).toBe(true);
    const labels = { projection: 'rounds', topic: e.topic, service: 'projector' };
    const lagOf = (text: string, partition: string) =>
      sampleValue(text, 'kafka_consumer_lag', { consumer: 'projector-rounds', topic: e.topic, partition });
    const metrics = await waitFor('lag 0 on every partition', async () => {
      const text = await projector.metrics.registry.metrics();
      return ['0', '1', '2'].every((p) => lagOf(text, p) === 0) ? text : undefined;
    });
    expect(sampleValue(metrics, 'projector_records_projected_total', labels)).toBe(
      rounds.length + replayed.length,
    );
    expect(sampleValue(metrics, 'projector_batch_size_count', labels)).toBeGreaterThan(0);
    expect(sampleValue(metrics, 'process_resident_memory_bytes', { service: 'projector' })).toBeGreaterThan(
      0,
    );

    // Live tail: a round appended now shows up in the list.
    const next = sampleRound('crash', perGame + 1, T0 + 10_000_000);
    await e.producer.send({ topic: e.topic, messages: [roundMessage(next)] });
    await waitFor('the live round in the game list', async () => {
      const [g] = await e.sql<{ r: string }[]>`select last_round::text as r from games where slug = 'crash'`;
      return g?.r === String(next.round_id) ? true : undefined;
    });
  });

  it('dead-letters undecodable records with the reason and keeps projecting', async () => {
    env = await createTestEnv('dlq');
    const e = env;
    const valid = (from: number, n: number) =>
      Array.from({ length: n }, (_, i) =>
        roundMessage(sampleRound('crash', from + i, T0 + (from + i) * 1000)),
      );
    const garbage = { key: 'crash', value: Buffer.from('garbage bytes') };
    const unknownSchema = {
      key: 'crash',
      value: Buffer.concat([
        Buffer.from([0, 0, 0, 0x0f, 0xff]),
        encodeRound(sampleRound('crash', 99, T0)).subarray(5),
      ]),
    };
    // A well-formed record of another event type (an auth-keys event) on the wrong topic.
    const otherEvent = {
      key: 'crash',
      value: encode(KEY_DELETED, { key_id: 'k1', at: T0 }),
    };
    // One key, so every record lands on one partition in this order.
    await produceAll(e.producer, e.topic, [
      ...valid(1, 10),
      garbage,
      unknownSchema,
      otherEvent,
      ...valid(11, 10),
    ]);

    const projector = await startProjector(e);
    await caughtUp(e);
    const [count] = await e.sql<{ n: number }[]>`select count(*)::int as n from rounds`;
    expect(count?.n).toBe(20);

    const dead = await readDeadLetters(e);
    expect(dead).toHaveLength(3);
    const [first, second, third] = dead;
    expect(first?.value).toEqual(garbage.value);
    expect(first?.key).toBe('crash');
    expect(first?.headers['dlq-reason']).toBe('bad magic byte 103');
    expect(first?.headers).toMatchObject({
      'dlq-topic': e.topic,
      'dlq-offset': '10',
      'dlq-projection': 'rounds',
    });
    expect(second?.value).toEqual(unknownSchema.value);
    expect(second?.headers['dlq-reason']).toBe('unknown schema id 4095');
    expect(second?.headers['dlq-offset']).toBe('11');
    expect(third?.value).toEqual(otherEvent.value);
    expect(third?.headers['dlq-offset']).toBe('12');
    expect(third?.headers['dlq-reason']).toBe(
      `schema subject ${KEY_DELETED} is not an event of the rounds topic`,
    );
    expect(first?.headers['dlq-partition']).toBe(String(first?.partition));
    expect(
      await projector.metrics.registry.getSingleMetricAsString('projector_records_dead_lettered_total'),
    ).toMatch(/ 3$/m);

    // It keeps going, and a restart resumes after the bad records instead of dead-lettering them again.
    await produceAll(e.producer, e.topic, valid(21, 5));
    await caughtUp(e);
    await projector.stop();
    await startProjector(e);
    await produceAll(e.producer, e.topic, valid(26, 1));
    await caughtUp(e);
    const rows = await e.sql<{ r: string }[]>`select round_id::text as r from rounds order by round_id`;
    expect(rows.map((r) => Number(r.r) - 1_000_000_000_000)).toEqual(
      Array.from({ length: 26 }, (_, i) => i + 1),
    );
    expect(await readDeadLetters(e)).toHaveLength(3);
  });

  it('dead-letters a round that decodes but that Postgres refuses (a NUL in a slot reel) and projects the rounds after it', async () => {
    env = await createTestEnv('poison');
    const e = env;
    const slot = (seq: number) => sampleRound('slot', seq, T0 + seq * 1000);
    const poisoned: RoundFinished = {
      ...slot(3),
      result: { game: 'slot', reels: ['seven', 'ch\u0000erry', 'bar'], multiplier: '0.00' },
    };
    // One key, one partition, one Kafka batch: the chunk holding the bad round is written record
    // by record, so the two before it and the three after it are projected.
    await produceAll(
      e.producer,
      e.topic,
      [slot(1), slot(2), poisoned, slot(4), slot(5), slot(6)].map(roundMessage),
    );

    const projector = await startProjector(e);
    await caughtUp(e);
    const rows = await e.sql<{ r: string }[]>`select round_id::text as r from rounds order by round_id`;
    expect(rows.map((r) => Number(r.r) - 3_000_000_000_000)).toEqual([1, 2, 4, 5, 6]);

    const dead = await readDeadLetters(e);
    expect(dead).toHaveLength(1);
    expect(dead[0]?.value).toEqual(encodeRound(poisoned));
    expect(dead[0]?.headers).toMatchObject({ 'dlq-offset': '2', 'dlq-projection': 'rounds' });
    expect(dead[0]?.headers['dlq-reason']).toMatch(/^refused by postgres: /);
    expect(projector.ready()).toBe(true);
    expect(projector.status().waiting).toBeUndefined();

    // The live tail goes on past it.
    await produceAll(e.producer, e.topic, [roundMessage(slot(7))]);
    await caughtUp(e);
    const [last] = await e.sql<{ r: string }[]>`select last_round::text as r from games where slug = 'slot'`;
    expect(last?.r).toBe(String(slot(7).round_id));
  });

  it('takes its position from Postgres: a new group resumes at the checkpoint, a wiped read model is rebuilt', async () => {
    env = await createTestEnv('pos');
    const e = env;
    const rounds = sampleRounds(10, T0);
    await produceAll(e.producer, e.topic, [
      ...rounds.map(roundMessage),
      { key: 'crash', value: Buffer.from('junk') },
    ]);
    const first = await startProjector(e);
    await caughtUp(e);
    await first.stop();

    // Kafka offsets lost (another group): records below the checkpoint are neither re-written nor re-dead-lettered.
    const config = loadConfig(process.env, { ...e.env, PROJECTOR_GROUP: `${e.env.PROJECTOR_GROUP}-b` });
    const start = async () => {
      const p = buildRoundsProjector({ config, kafka: e.kafka, sql: e.sql, logger });
      running.push(p);
      await p.start();
      return p;
    };
    const second = await start();
    const more = sampleRounds(11, T0).slice(rounds.length);
    await produceAll(e.producer, e.topic, more.map(roundMessage));
    await caughtUp(e);
    expect(await countRows(e)).toBe(rounds.length + more.length);
    expect(await readDeadLetters(e)).toHaveLength(1);
    expect(
      await second.metrics.registry.getSingleMetricAsString('projector_records_projected_total'),
    ).toMatch(new RegExp(` ${more.length}$`, 'm'));
    await second.stop();

    // Read model wiped while the group's Kafka offsets stay at the end: the projector seeks back and rebuilds.
    await e.sql`truncate rounds`;
    await e.sql`delete from projection_checkpoints`;
    await e.sql`update games set last_round = null, last_update = null`;
    await start();
    await caughtUp(e);
    expect(await countRows(e)).toBe(rounds.length + more.length);
    const [crash] = await e.sql<
      { r: string }[]
    >`select last_round::text as r from games where slug = 'crash'`;
    expect(crash?.r).toBe(String(1_000_000_000_011));
  });
});

async function countRows(e: TestEnv): Promise<number> {
  const [row] = await e.sql<{ n: number }[]>`select count(*)::int as n from rounds`;
  return row?.n ?? -1;
}

interface DeadLetter {
  partition: number;
  key: string | undefined;
  value: Buffer | null;
  headers: Record<string, string>;
}

async function readDeadLetters(e: TestEnv): Promise<DeadLetter[]> {
  const offsets = await partitionOffsets(e.kafka, e.dlqTopic);
  const out: DeadLetter[] = [];
  await readRange(
    e.kafka,
    e.dlqTopic,
    new Map([...offsets.keys()].map((p) => [p, 0n])),
    ({ partition, message }) => {
      const headers = Object.fromEntries(
        Object.entries(message.headers ?? {}).map(([k, v]) => [k, String(v)]),
      );
      out.push({ partition, key: message.key?.toString(), value: message.value, headers });
    },
  );
  return out.sort((a, b) => Number(a.headers['dlq-offset']) - Number(b.headers['dlq-offset']));
}
