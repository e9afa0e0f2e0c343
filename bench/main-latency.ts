/**
 * Main-job latency benchmark: time from a round's append to the log until its row is
 * visible through `GET /api/latest/:game`, p50/p99 over a few hundred rounds. The projector and
 * the API run as their real processes; this process appends crash rounds one at a time (like the
 * round engine) and polls the API back to back until the new round_id shows. Target: p99 < 100 ms.
 * The baseline in the same run is the bare cost of the poll itself (a request that already
 * shows the round), which bounds the resolution of the figure.
 *
 * Usage: tsx bench/main-latency.ts [--rounds 300] [--gap-ms 40]
 */
import { parseArgs } from 'node:util';
import { createSql } from '../lib/db/pool.ts';
import { createKafka } from '../lib/log/kafka.ts';
import { encodeRound } from '../lib/log/rounds-codec.ts';
import { ensureTopics, topicName } from '../lib/log/topics.ts';
import { createLogger } from '../lib/logger.ts';
import { loadConfig } from '../tests/support/config.ts';
import { waitFor } from '../tests/support/poll.ts';
import { freePort, startService, uniqueId } from '../tests/support/processes.ts';
import { syntheticRound } from '../tests/support/rounds-fixture.ts';
import { latencySummary, report } from './lib.ts';

const { values } = parseArgs({
  options: { rounds: { type: 'string', default: '300' }, 'gap-ms': { type: 'string', default: '40' } },
});
const ROUNDS = Number(values.rounds);
const GAP = Number(values['gap-ms']);
const ns = uniqueId('bench-latency-');
const schema = uniqueId('bench_latency_');
const config = loadConfig(process.env, { TOPIC_NAMESPACE: `${ns}-`, DATABASE_SCHEMA: schema });
const kafka = createKafka(config, 'bench-latency', createLogger('bench', 'warn'));
const topic = topicName(config, 'rounds');
const admin = kafka.admin();
await admin.connect();
await ensureTopics(admin, config);

const apiPort = await freePort();
const env = {
  TOPIC_NAMESPACE: `${ns}-`,
  DATABASE_SCHEMA: schema,
  PROJECTOR_GROUP: `${ns}-projector`,
  PROJECTOR_PORT: '0',
  API_PORT: String(apiPort),
  RATE_LIMIT_MAX: '10000000',
  LOG_LEVEL: 'warn',
};
const api = startService('services/api/main.ts', env);
const projector = startService('services/projector/main.ts', env);
const latestUrl = `http://127.0.0.1:${apiPort}/api/latest/crash`;
const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
await producer.connect();

async function latestRoundId(): Promise<number | undefined> {
  const res = await fetch(latestUrl);
  if (res.status !== 200) {
    await res.body?.cancel();
    return undefined;
  }
  return ((await res.json()) as { round_id: number }).round_id;
}

async function append(seq: number): Promise<number> {
  const r = syntheticRound(0, seq, Date.now());
  await producer.send({ topic, acks: -1, messages: [{ key: r.game_slug, value: encodeRound(r) }] });
  return r.round_id;
}

// Warm-up: the first round also waits for the projector's group join.
const first = await append(1);
await waitFor(
  'the warm-up round',
  async () => ((await latestRoundId()) === first ? true : undefined),
  120_000,
  100,
);

const fromAppend: number[] = [];
const fromAck: number[] = [];
const pollCost: number[] = [];
for (let seq = 2; seq < ROUNDS + 2; seq++) {
  const t0 = performance.now();
  const id = await append(seq);
  const tAck = performance.now();
  for (;;) {
    const tp = performance.now();
    const seen = await latestRoundId();
    if (seen === id) {
      const t1 = performance.now();
      fromAppend.push(t1 - t0);
      fromAck.push(t1 - tAck);
      pollCost.push(t1 - tp);
      break;
    }
    if (performance.now() - t0 > 10_000) throw new Error(`round ${id} not visible after 10 s`);
  }
  await new Promise((r) => setTimeout(r, GAP));
}

const row = (what: string, v: number[]) => {
  const s = latencySummary(v);
  return { what, 'p50 ms': s.p50.toFixed(1), 'p99 ms': s.p99.toFixed(1), 'max ms': s.max.toFixed(1) };
};
report(`append → visible in /api/latest/crash over ${ROUNDS} rounds (target p99 < 100 ms)`, [
  row('from the start of the append', fromAppend),
  row('from the broker acknowledgement', fromAck),
  row('baseline: one poll request that finds it', pollCost),
]);

await producer.disconnect();
await projector.stop('SIGTERM');
await api.stop('SIGTERM');
const sql = createSql(config, { max: 1 });
await sql.unsafe(`drop schema if exists "${schema}" cascade`);
await sql.end();
await admin.deleteTopics({ topics: [topic, topicName(config, 'roundsDeadLetter')] }).catch(() => {});
await admin.disconnect();
