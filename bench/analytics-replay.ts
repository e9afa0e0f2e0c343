/**
 * Analytics replay benchmark: N rounds (default 1,000,000) made by the round engine's
 * pure decider over real hash chains (ROUND_CHAIN_LENGTH rounds per epoch, 10 of them tampered)
 * are appended once to a fresh `rounds` topic with batched sends. Then, in the same run, over
 * the same records and the same reader (lib/log/kafka.ts readRange):
 * - baseline: a plain consumer that only decodes each record (Avro, rules/rounds/round.ts decodeRound);
 * - the analytics replay (services/analytics/replay.ts): decode, check every proof, fold the
 *   per-game statistics; proofs in its worker thread (the default), then again all on one thread.
 * The baseline runs before and after the replay, to bracket drift on a shared machine.
 * Figures: records per second of each, the ratio replay / baseline, the peak heap of each (the
 * replay must stream: its heap should not grow with N), and the CPU per round of decoding,
 * checking the proof and folding the statistics, measured in-process on 100,000 rounds.
 *
 * Usage: tsx bench/analytics-replay.ts [--rounds 1000000] [--chain 100000]
 */
import { randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';
import { createKafka, readRange } from '../lib/log/kafka.ts';
import { decodeRound, encodeRound } from '../lib/log/rounds-codec.ts';
import { ensureTopics, topicName } from '../lib/log/topics.ts';
import { createLogger } from '../lib/logger.ts';
import { GAME_SLUGS } from '../rules/games/catalog.ts';
import type { RoundFinished } from '../rules/rounds/round.ts';
import { ProofChecker } from '../services/analytics/proofs.ts';
import { replayRounds } from '../services/analytics/replay.ts';
import { RoundStats } from '../services/analytics/stats/index.ts';
import { chainSource, RoundMaker } from '../tests/support/analytics.ts';
import { loadConfig } from '../tests/support/config.ts';
import { uniqueId } from '../tests/support/processes.ts';
import { report } from './lib.ts';

const { values } = parseArgs({
  options: { rounds: { type: 'string', default: '1000000' }, chain: { type: 'string', default: '100000' } },
});
const N = Number(values.rounds);
const CHAIN = Number(values.chain);
const BATCH = 10_000;
const TAMPERED = 10;
const ns = `${uniqueId('bench-analytics-')}-`;
const config = loadConfig(process.env, { TOPIC_NAMESPACE: ns });
const kafka = createKafka(config, 'bench-analytics', createLogger('bench', 'warn'));
const topic = topicName(config, 'rounds');
const admin = kafka.admin();
await admin.connect();
await ensureTopics(admin, config, ['rounds']);

// 1. Append N rounds once. One send in flight at a time, so each game's rounds are in chain order
// as the engine appends them (concurrent sends without idempotence may land out of order); the
// next batch is generated while the previous one is in flight.
const maker = new RoundMaker(GAME_SLUGS, chainSource(randomBytes(32), CHAIN), Date.now() - N * 10, 10);
const producer = kafka.producer({ allowAutoTopicCreation: false });
await producer.connect();
const tAppend = performance.now();
let inFlight: Promise<unknown> = Promise.resolve();
const tamperEvery = Math.max(1, Math.floor(N / TAMPERED / BATCH)) * BATCH;
let tampered = 0;
for (let i = 0; i < N; i += BATCH) {
  const batch: RoundFinished[] = maker.next(Math.min(BATCH, N - i));
  // The first round of every tamperEvery-th batch is crash (games take turns); forge its point.
  const r = batch[0] as RoundFinished;
  if (i % tamperEvery === 0 && r.result.game === 'crash') {
    batch[0] = { ...r, result: { game: 'crash', point: '9999.00' } };
    tampered++;
  }
  const messages = batch.map((x) => ({ key: x.game_slug, value: encodeRound(x) }));
  await inFlight;
  inFlight = producer.send({ topic, acks: 1, messages });
}
await inFlight;
const appendMs = performance.now() - tAppend;
await producer.disconnect();
const offsets = await admin.fetchTopicOffsets(topic);
const from = new Map(offsets.map((o) => [o.partition, BigInt(o.low)]));

/**
 * Samples the heap every 250 ms while `fn` runs; @returns fn's result, its ms, the peak heap (MiB)
 * and the CPU this process used meanwhile (s, worker threads included).
 */
async function measure<T>(
  fn: () => Promise<T>,
): Promise<{ value: T; ms: number; heapMiB: number; cpuS: number }> {
  global.gc?.();
  let peak = process.memoryUsage().heapUsed;
  const timer = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage().heapUsed);
  }, 250);
  const t = performance.now();
  const cpu = process.cpuUsage();
  try {
    const value = await fn();
    const used = process.cpuUsage(cpu);
    const cpuS = (used.user + used.system) / 1e6;
    return { value, ms: performance.now() - t, heapMiB: Math.round(peak / 2 ** 20), cpuS };
  } finally {
    clearInterval(timer);
  }
}

// 2. Baseline: only decode.
const plain = () =>
  measure(async () => {
    let decoded = 0;
    await readRange(
      kafka,
      topic,
      from,
      ({ message }) => {
        if (decodeRound(message.value)) decoded++;
      },
      { timeoutMs: 3_600_000 },
    );
    return decoded;
  });
const base1 = await plain();

// 3. The analytics replay, proofs in a worker thread (the default), then all on one thread.
const replayWith = (proofThread: boolean) =>
  measure(() =>
    replayRounds({
      kafka,
      topic,
      from: { kind: 'earliest' },
      to: { kind: 'latest' },
      games: GAME_SLUGS,
      timeoutMs: 3_600_000,
      proofThread,
    }),
  );
const replay = await replayWith(true);
const replayOne = await replayWith(false);
const base2 = await plain();

const rate = (n: number, ms: number) => Math.round(n / (ms / 1000));
const baseRate = (rate(base1.value, base1.ms) + rate(base2.value, base2.ms)) / 2;
const replayRate = rate(replay.value.records, replay.ms);
report(
  `analytics replay of ${N.toLocaleString('en-US')} rounds (chains of ${CHAIN.toLocaleString('en-US')})`,
  [
    {
      what: 'append (batches of 10,000, acks=1)',
      ms: Math.round(appendMs),
      'records/s': rate(N, appendMs),
      'peak heap MiB': '-',
      'CPU s': '-',
    },
    {
      what: 'baseline: plain consumer, decode only (1st)',
      ms: Math.round(base1.ms),
      'records/s': rate(base1.value, base1.ms),
      'peak heap MiB': base1.heapMiB,
      'CPU s': base1.cpuS.toFixed(2),
    },
    {
      what: 'analytics replay: decode + proofs (worker thread) + statistics',
      ms: Math.round(replay.ms),
      'records/s': replayRate,
      'peak heap MiB': replay.heapMiB,
      'CPU s': replay.cpuS.toFixed(2),
    },
    {
      what: 'the same, proofs on the reading thread (--no proof thread)',
      ms: Math.round(replayOne.ms),
      'records/s': rate(replayOne.value.records, replayOne.ms),
      'peak heap MiB': replayOne.heapMiB,
      'CPU s': replayOne.cpuS.toFixed(2),
    },
    {
      what: 'baseline: plain consumer, decode only (2nd)',
      ms: Math.round(base2.ms),
      'records/s': rate(base2.value, base2.ms),
      'peak heap MiB': base2.heapMiB,
      'CPU s': base2.cpuS.toFixed(2),
    },
  ],
);
// Where the replay's time goes, in-process without the broker: 100,000 of the same kind of rounds.
const sample = new RoundMaker(GAME_SLUGS, chainSource(randomBytes(32), CHAIN))
  .next(100_000)
  .map((r) => encodeRound(r));
const perRound = (fn: () => void) => {
  const t = performance.now();
  fn();
  return ((performance.now() - t) * 1000) / sample.length;
};
const decodeUs = perRound(() => {
  for (const b of sample) decodeRound(b);
});
const decoded = sample.map((b) => decodeRound(b));
const proofs = new ProofChecker();
const proofUs = perRound(() => {
  decoded.forEach((r, i) => {
    proofs.check(r, { partition: 0, offset: String(i) });
  });
});
const stats = new RoundStats(GAME_SLUGS);
const statsUs = perRound(() => {
  for (const r of decoded) stats.add(r);
});
report('CPU per round, in-process (100,000 rounds, no broker)', [
  { step: 'decode (Avro)', 'µs/round': decodeUs.toFixed(1) },
  { step: 'provably-fair check (chain step, HMAC, result)', 'µs/round': proofUs.toFixed(1) },
  { step: 'statistics (four games)', 'µs/round': statsUs.toFixed(1) },
]);

const f = replay.value.fairness;
console.log(
  `replay: ${replay.value.records} records, ${f.checked} proofs checked, ${f.failed} failed (${tampered} tampered), ` +
    `slot RTP ${((replay.value.games.slot?.rtp ?? 0) * 100).toFixed(2)}%, crash edge at 2x ${((replay.value.games.crash?.house_edge.find((e) => e.target === 2)?.edge ?? 0) * 100).toFixed(2)}%`,
);
console.log(`ratio analytics replay / plain decode: ${((replayRate / baseRate) * 100).toFixed(1)}%`);

await admin.deleteTopics({ topics: [topic] }).catch(() => {});
await admin.disconnect();
