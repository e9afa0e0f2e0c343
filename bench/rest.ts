/**
 * REST benchmark: requests per second and p50/p99 latency of
 * `/api/history/crash?limit=500` and `/api/latest/crash` under autocannon on loopback, beside a
 * bare fastify route returning a constant (bench/constant-server.ts) in the same run.
 * The API runs as its real process with the read model filled with 20,000 rounds per game and
 * the per-IP limit raised (RATE_LIMIT_MAX) so the limiter counts but never refuses; it answers
 * latest and history from its in-memory window (services/api/rounds/window.ts), which
 * it loads from Postgres at start. Targets: history?limit=500 at least 25% of the
 * constant route's rate with p99 < 20 ms, latest at least 50%.
 *
 * Usage: tsx bench/rest.ts [--seconds 10] [--connections 20]
 */
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { migrate } from '../lib/db/migrate.ts';
import { createSql } from '../lib/db/pool.ts';
import { extrasOf, roundValue } from '../rules/rounds/round.ts';
import { loadConfig } from '../tests/support/config.ts';
import { waitFor } from '../tests/support/poll.ts';
import { freePort, startService, uniqueId } from '../tests/support/processes.ts';
import { syntheticRound } from '../tests/support/rounds-fixture.ts';
import { report } from './lib.ts';

const { values } = parseArgs({
  options: { seconds: { type: 'string', default: '10' }, connections: { type: 'string', default: '20' } },
});
const seconds = Number(values.seconds);
const connections = Number(values.connections);
const schema = uniqueId('bench_rest_');
const config = loadConfig(process.env, { DATABASE_SCHEMA: schema });
const sql = createSql(config, { max: 2 });
await migrate(sql, schema);

const PER_GAME = 20_000;
const start = Date.UTC(2026, 0, 1);
for (let chunk = 0; chunk < PER_GAME * 4; chunk += 5_000) {
  const rows = Array.from({ length: 5_000 }, (_, j) => {
    const i = chunk + j;
    const r = syntheticRound(i, Math.floor(i / 4) + 1, start + i * 1000);
    return {
      game_id: r.game_id,
      round_id: r.round_id,
      game_slug: r.game_slug,
      game_type: r.game_type,
      finished_at: new Date(r.finished_at),
      value: roundValue(r.result),
      extras: JSON.stringify(extrasOf(r.result)),
      appended_at: new Date(r.finished_at),
    };
  });
  await sql`insert into rounds ${sql(rows)}`;
}
await sql`update games g set last_round = m.r, last_update = m.t
          from (select game_id, max(round_id) r, max(finished_at) t from rounds group by game_id) m where m.game_id = g.id`;
await sql`analyze rounds`;

const apiPort = await freePort();
const constPort = await freePort();
const api = startService('services/api/main.ts', {
  DATABASE_SCHEMA: schema,
  API_PORT: String(apiPort),
  RATE_LIMIT_MAX: '10000000',
  LOG_LEVEL: 'warn',
});
const constant = startService('bench/constant-server.ts', {}, [String(constPort)]);

async function up(url: string): Promise<void> {
  await waitFor(url, async () => ((await fetch(url)).ok ? true : undefined), 60_000, 200);
}

await up(`http://127.0.0.1:${apiPort}/api/latest/crash`).catch((err) => {
  console.error('API output:', api.output(), api.child.exitCode);
  throw err;
});
await up(`http://127.0.0.1:${constPort}/constant`);

async function load(title: string, url: string) {
  const r = await autocannon({ url, connections, duration: seconds, pipelining: 1 });
  return {
    what: title,
    'req/s': Math.round(r.requests.average),
    'p50 ms': r.latency.p50,
    'p99 ms': r.latency.p99,
    errors: r.errors + r.non2xx,
  };
}

const rows = [
  await load('baseline: fastify constant route', `http://127.0.0.1:${constPort}/constant`),
  await load('/api/latest/crash', `http://127.0.0.1:${apiPort}/api/latest/crash`),
  await load('/api/history/crash?limit=500', `http://127.0.0.1:${apiPort}/api/history/crash?limit=500`),
];
report(`REST under autocannon, ${connections} connections, ${seconds} s each, loopback`, rows);
const [base, latest, history] = rows.map((r) => r['req/s']) as [number, number, number];
const pct = (x: number) => `${((x / base) * 100).toFixed(1)}%`;
console.log(`ratio latest/constant: ${pct(latest)} (target >= 50%)`);
console.log(
  `ratio history?limit=500/constant: ${pct(history)} (target >= 25%), p99 ${rows[2]?.['p99 ms']} ms (target < 20 ms)`,
);

await constant.stop('SIGTERM');
await api.stop('SIGTERM');
await sql.unsafe(`drop schema if exists "${schema}" cascade`);
await sql.end();
