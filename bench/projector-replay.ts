/**
 * Projector replay benchmark: N RoundFinished records (default 200,000) are appended to
 * a fresh `rounds` topic; then the real projector process (services/projector/main.ts) replays them into
 * Postgres. Baseline in the same run: the same rows loaded with COPY by psql into the same table
 * shape. Target: projector rate at least 30% of the COPY rate.
 *
 * Usage: tsx bench/projector-replay.ts [--records 200000]
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { migrate } from '../lib/db/migrate.ts';
import { createSql } from '../lib/db/pool.ts';
import { createKafka } from '../lib/log/kafka.ts';
import { encodeRound } from '../lib/log/rounds-codec.ts';
import { ensureTopics, topicName } from '../lib/log/topics.ts';
import { createLogger } from '../lib/logger.ts';
import { extrasOf, roundValue } from '../rules/rounds/round.ts';
import { loadConfig } from '../tests/support/config.ts';
import { waitFor } from '../tests/support/poll.ts';
import { startService, uniqueId } from '../tests/support/processes.ts';
import { syntheticRound } from '../tests/support/rounds-fixture.ts';
import { report } from './lib.ts';

const { values } = parseArgs({ options: { records: { type: 'string', default: '200000' } } });
const N = Number(values.records);
const ns = uniqueId('bench-replay-');
const schema = uniqueId('bench_replay_');
const copySchema = `${schema}_copy`;
const config = loadConfig(process.env, { TOPIC_NAMESPACE: `${ns}-`, DATABASE_SCHEMA: schema });
const kafka = createKafka(config, 'bench-replay', createLogger('bench', 'warn'));
const sql = createSql(config, { max: 2 });
const topic = topicName(config, 'rounds');

const start = Date.UTC(2026, 0, 1);
const rounds = Array.from({ length: N }, (_, i) =>
  syntheticRound(i, Math.floor(i / 4) + 1, start + i * 1000),
);

// 1. Append the records.
const admin = kafka.admin();
await admin.connect();
await ensureTopics(admin, config);
const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
await producer.connect();
const tAppend = performance.now();
for (let i = 0; i < N; i += 5000) {
  await producer.send({
    topic,
    acks: -1,
    messages: rounds.slice(i, i + 5000).map((r) => ({ key: r.game_slug, value: encodeRound(r) })),
  });
}
const appendMs = performance.now() - tAppend;
await producer.disconnect();

// 2. Baseline: COPY of the same rows by psql.
await migrate(sql, copySchema);
const dir = mkdtempSync(join(tmpdir(), 'bench-copy-'));
const csv = join(dir, 'rounds.csv');
const q = (s: string) => `"${s.replaceAll('"', '""')}"`;
writeFileSync(
  csv,
  rounds
    .map((r) =>
      [
        r.game_id,
        r.round_id,
        r.game_slug,
        r.game_type,
        new Date(r.finished_at).toISOString(),
        q(roundValue(r.result)),
        q(JSON.stringify(extrasOf(r.result))),
        '',
        new Date(r.finished_at).toISOString(),
      ].join(','),
    )
    .join('\n'),
);
const tCopy = performance.now();
execFileSync('psql', [
  config.db.url,
  '-v',
  'ON_ERROR_STOP=1',
  '-qc',
  `\\copy "${copySchema}".rounds (game_id, round_id, game_slug, game_type, finished_at, value, extras, proof, appended_at) from '${csv}' with (format csv)`,
]);
const copyMs = performance.now() - tCopy;
rmSync(dir, { recursive: true, force: true });

// 3. The projector replays the topic from offset 0.
await migrate(sql, schema);
const tStart = performance.now();
const projector = startService('services/projector/main.ts', {
  TOPIC_NAMESPACE: `${ns}-`,
  DATABASE_SCHEMA: schema,
  PROJECTOR_GROUP: `${ns}-projector`,
  PROJECTOR_PORT: '0',
  LOG_LEVEL: 'warn',
});
let tFirst = 0;
await waitFor(
  'the projector to project every record',
  async () => {
    const [row] = await sql`select count(*)::int as n from rounds`;
    const n = Number(row?.n ?? 0);
    if (n > 0 && tFirst === 0) tFirst = performance.now();
    return n === N ? n : undefined;
  },
  600_000,
  50,
);
const tEnd = performance.now();
await projector.stop('SIGTERM');

const copyRate = N / (copyMs / 1000);
const replayRate = N / ((tEnd - tFirst) / 1000);
report(`projector replay of ${N} RoundFinished records`, [
  {
    what: 'append to the log (kafkajs, idempotent, acks=all)',
    ms: Math.round(appendMs),
    'records/s': Math.round(N / (appendMs / 1000)),
  },
  {
    what: 'baseline: psql \\copy of the same rows',
    ms: Math.round(copyMs),
    'records/s': Math.round(copyRate),
  },
  {
    what: 'projector, first row to last row',
    ms: Math.round(tEnd - tFirst),
    'records/s': Math.round(replayRate),
  },
  {
    what: 'projector, including process start and group join',
    ms: Math.round(tEnd - tStart),
    'records/s': Math.round(N / ((tEnd - tStart) / 1000)),
  },
]);
console.log(`ratio projector/COPY: ${((replayRate / copyRate) * 100).toFixed(1)}% (target >= 30%)`);

await sql.unsafe(`drop schema if exists "${schema}" cascade`);
await sql.unsafe(`drop schema if exists "${copySchema}" cascade`);
await admin.deleteTopics({ topics: [topic, topicName(config, 'roundsDeadLetter')] }).catch(() => {});
await admin.disconnect();
await sql.end();
