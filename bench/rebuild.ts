/**
 * Rebuild benchmark: for each read model, the same records are projected twice from
 * offset 0: first by the live projector (baseline, measured in the same run: start to caught up
 * with the topic's end), then by `rebuildReadModel` into shadow tables, checked and swapped in
 * (its replay phase: start to the live position; the check, swap and row-by-row comparison are
 * reported apart). Events per second = records that decoded and were projected, per second.
 *
 * Usage: tsx bench/rebuild.ts [--rounds 100000] [--bets 20000] [--keys 10000]
 *   (`npm run bench -- rebuild --rounds 50000 …`). Bets are ~3.5 wallet events each.
 */
import { parseArgs } from 'node:util';
import type { Message } from 'kafkajs';
import { migrate } from '../lib/db/migrate.ts';
import { createSql, type Sql } from '../lib/db/pool.ts';
import { encode } from '../lib/log/codec.ts';
import { createKafka, partitionOffsets } from '../lib/log/kafka.ts';
import { encodeRound } from '../lib/log/rounds-codec.ts';
import { ensureTopics, type TopicKey, topicName } from '../lib/log/topics.ts';
import { encodeEvent, type WalletEvent } from '../lib/log/wallet-events.ts';
import { createLogger } from '../lib/logger.ts';
import { rebuildReadModel } from '../lib/rebuild/rebuild.ts';
import { checkpointsIn } from '../lib/rebuild/shadow.ts';
import { buildAuthKeysProjector } from '../services/projector/auth-keys/projector.ts';
import { buildRoundsProjector } from '../services/projector/projector.ts';
import { buildWalletProjector } from '../services/projector/wallet/projector.ts';
import { loadConfig } from '../tests/support/config.ts';
import { testKey } from '../tests/support/credentials.ts';
import { waitFor } from '../tests/support/poll.ts';
import { uniqueId } from '../tests/support/processes.ts';
import { syntheticRound } from '../tests/support/rounds-fixture.ts';
import { placed, succeeded } from '../tests/support/settlement.ts';
import { report } from './lib.ts';

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '100000' },
    bets: { type: 'string', default: '20000' },
    keys: { type: 'string', default: '10000' },
  },
});
const ROUNDS = Number(values.rounds);
const BETS = Number(values.bets);
const KEYS = Number(values.keys);
const ns = uniqueId('bench-rebuild-');
const schema = uniqueId('bench_rebuild_');
const config = loadConfig(process.env, {
  TOPIC_NAMESPACE: `${ns}-`,
  DATABASE_SCHEMA: schema,
  PROJECTOR_GROUP: `${ns}-projector`,
});
const logger = createLogger('bench', 'warn');
const kafka = createKafka(config, 'bench-rebuild', logger);
const sql: Sql = createSql(config, { max: 6 });

/** Appends `messages` in sends of 5000, idempotent, acks=all. */
async function append(topic: TopicKey, messages: Message[]): Promise<void> {
  const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
  await producer.connect();
  for (let i = 0; i < messages.length; i += 5000)
    await producer.send({ topic: topicName(config, topic), acks: -1, messages: messages.slice(i, i + 5000) });
  await producer.disconnect();
}

function roundRecords(): Message[] {
  const t0 = Date.UTC(2026, 0, 1);
  return Array.from({ length: ROUNDS }, (_, i) => {
    const r = syntheticRound(i, Math.floor(i / 4) + 1, t0 + i * 1000);
    return { key: r.game_slug, value: encodeRound(r) };
  });
}

function walletRecords(): Message[] {
  const out: Message[] = [];
  for (let i = 1; i <= BETS; i++) {
    const tx = i * 4;
    const p = placed(tx, 'crash', i, { user_id: `u-${i % 500}` });
    const won = i % 2 === 0;
    const events: WalletEvent[] = [
      p,
      succeeded(tx, 'bet', '100.00'),
      {
        type: 'BetSettled',
        value: {
          tx_id: tx,
          bet: p.value.bet,
          outcome: won ? 'won' : 'lost',
          payout_minor: won ? 2000 : 0,
          win_tx_id: won ? tx + 1 : null,
          at: Date.UTC(2026, 5, 1) + i,
        },
      },
      ...(won ? [succeeded(tx, 'win', '120.00', 2000)] : []),
    ];
    for (const e of events) out.push({ key: `op-1:u-${i % 500}`, value: encodeEvent(e) });
  }
  return out;
}

function keyRecords(): Message[] {
  let id = '';
  return Array.from({ length: KEYS }, (_, i) => {
    const at = 1_800_000_000_000 + i;
    // Every fifth event revokes the key created just before; the record key is the key id, as the
    // API writes it, so a key's events stay in order on one partition.
    if (i % 5 === 4) return { key: id, value: encode('casino.auth.KeyRevoked', { key_id: id, at }) };
    const { event } = testKey({ scopes: ['read:games'], name: `k${i}` });
    id = event.key_id;
    return { key: id, value: encode('casino.auth.KeyCreated', { ...event, created_at: at }) };
  });
}

const MODELS = [
  {
    model: 'rounds',
    projection: 'rounds',
    topic: 'rounds' as const,
    build: buildRoundsProjector,
    records: roundRecords,
  },
  {
    model: 'api-keys',
    projection: 'auth-keys',
    topic: 'authKeys' as const,
    build: buildAuthKeysProjector,
    records: keyRecords,
  },
  {
    model: 'wallet',
    projection: 'wallet',
    topic: 'walletTransactions' as const,
    build: buildWalletProjector,
    records: walletRecords,
  },
];

const admin = kafka.admin();
await admin.connect();
await ensureTopics(admin, config, ['rounds', 'roundsDeadLetter', 'authKeys', 'walletTransactions']);
await migrate(sql, schema);
const rows: Record<string, string | number>[] = [];
try {
  for (const m of MODELS) {
    const records = m.records();
    await append(m.topic, records);
    const topic = topicName(config, m.topic);
    const ends = await partitionOffsets(kafka, topic);
    // Baseline: the live projector from offset 0 to the topic's end.
    const live = m.build({ config, kafka, sql, logger });
    const t0 = performance.now();
    await live.start();
    await waitFor(
      `${m.model} projected`,
      async () => {
        const cps = await checkpointsIn(sql, schema, m.projection, topic);
        return [...ends].every(([p, o]) => (cps.get(p) ?? o.low) === o.high) ? true : undefined;
      },
      900_000,
      50,
    );
    const liveMs = performance.now() - t0;
    await live.stop();
    // The rebuild of the same records (the live projector stopped, so they do not share the CPU).
    const r = await rebuildReadModel({ config, kafka, sql, logger, model: m.model });
    if (!r.after?.identical) throw new Error(`${m.model}: the rebuilt tables differ`);
    const liveRate = r.events / (liveMs / 1000);
    const rebuildRate = r.events / (r.replayMs / 1000);
    rows.push({
      'read model': m.model,
      records: records.length,
      'live projector ms': Math.round(liveMs),
      'live events/s': Math.round(liveRate),
      'rebuild replay ms': Math.round(r.replayMs),
      'rebuild events/s': Math.round(rebuildRate),
      'rebuild/live': `${((rebuildRate / liveRate) * 100).toFixed(0)}%`,
      'check+swap+compare ms': Math.round(r.totalMs - r.replayMs),
      'lock held ms': Math.round(r.lockedMs),
    });
  }
  report(
    `rebuild beside the live projector over the same records (rounds ${ROUNDS}, bets ${BETS}, key events ${KEYS})`,
    rows,
  );
} finally {
  await sql.unsafe(`drop schema if exists "${schema}" cascade`);
  const topics = (await admin.listTopics()).filter((t) => t.startsWith(`${ns}-`));
  if (topics.length > 0) await admin.deleteTopics({ topics }).catch(() => {});
  await admin.disconnect();
  await sql.end();
}
