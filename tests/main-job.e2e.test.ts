/**
 * The main job end to end: round engine → rounds topic → projector → Postgres → REST API, as
 * three real processes on the real broker and database, each run in its own topic namespace and
 * schema. Also checks that a projector killed with SIGKILL mid-stream resumes with no lost and no
 * doubled row, and that a round verifies from its revealed hash with the verify CLI.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSql, type Sql } from '../lib/db/pool.ts';
import { createKafka } from '../lib/log/kafka.ts';
import { ensureTopics, topicName } from '../lib/log/topics.ts';
import { createLogger } from '../lib/logger.ts';
import { loadConfig } from './support/config.ts';
import { roundsInLog } from './support/drill.ts';
import { waitFor } from './support/poll.ts';
import { freePort, ROOT, type Service, startService, uniqueId } from './support/processes.ts';

const run = promisify(execFile);
const ns = uniqueId('e2e-main-');
const schema = uniqueId('e2e_main_');
const config = loadConfig(process.env, { TOPIC_NAMESPACE: `${ns}-`, DATABASE_SCHEMA: schema });
const kafka = createKafka(config, 'main-job-e2e', createLogger('test', 'warn'));
let sql: Sql;
let env: Record<string, string>;
let base: string;
const services: Record<string, Service> = {};

interface GameRow {
  slug: string;
  last_round: number | null;
  last_update: string | null;
}

async function getJson<T>(path: string): Promise<{ status: number; body: T }> {
  const res = await fetch(`${base}${path}`);
  return { status: res.status, body: (await res.json()) as T };
}

beforeAll(async () => {
  const admin = kafka.admin();
  await admin.connect();
  await ensureTopics(admin, config);
  await admin.disconnect();
  const apiPort = await freePort();
  base = `http://127.0.0.1:${apiPort}`;
  env = {
    TOPIC_NAMESPACE: `${ns}-`,
    DATABASE_SCHEMA: schema,
    PROJECTOR_GROUP: `${ns}-projector`,
    API_PORT: String(apiPort),
    ROUND_ENGINE_PORT: '0',
    PROJECTOR_PORT: '0',
    ROUND_SPEED: '25',
    ROUND_CHAIN_LENGTH: '1000',
    ROUND_SERVER_SEED: 'ab'.repeat(32),
    RATE_LIMIT_MAX: '100000',
  };
  services.api = startService('services/api/main.ts', env);
  services.projector = startService('services/projector/main.ts', env);
  services.engine = startService('services/round-engine/main.ts', env);
  sql = createSql(config, { max: 2 });
});

afterAll(async () => {
  for (const s of Object.values(services)) await s.stop('SIGTERM');
  await sql?.unsafe(`drop schema if exists "${schema}" cascade`);
  await sql?.end();
  const admin = kafka.admin();
  await admin.connect();
  await admin
    .deleteTopics({ topics: [topicName(config, 'rounds'), topicName(config, 'roundsDeadLetter')] })
    .catch(() => {});
  await admin.disconnect();
});

describe('main job', () => {
  it('shows rounds of all four games through the REST API within a minute', async () => {
    const games = await waitFor(
      'a round of every game in /api/games',
      async () => {
        const { status, body } = await getJson<GameRow[]>('/api/games');
        return status === 200 && body.length === 4 && body.every((g) => g.last_round !== null)
          ? body
          : undefined;
      },
      60_000,
      500,
    );
    expect(games.map((g) => g.slug).sort()).toEqual(['crash', 'double', 'slot', 'wall-street']);
    for (const g of games) {
      const latest = await getJson<Record<string, unknown>>(`/api/latest/${g.slug}`);
      expect(latest.status).toBe(200);
      expect(latest.body).toMatchObject({
        game_slug: g.slug,
        game_id: expect.any(Number),
        round_id: expect.any(Number),
      });
      expect(typeof JSON.parse(latest.body.extras as string)).toBe('object');
      const history = await getJson<{ round_id: number; finished_at: string }[]>(
        `/api/history/${g.slug}?limit=5`,
      );
      expect(history.status).toBe(200);
      const times = history.body.map((r) => Date.parse(r.finished_at));
      expect([...times].sort((a, b) => b - a)).toEqual(times);
    }
  }, 90_000);

  it('verifies a round from its revealed hash with the verify CLI', async () => {
    const latest = await getJson<{ round_id: number }>('/api/latest/crash');
    const { stdout } = await run(
      process.execPath,
      [
        '--import',
        'tsx',
        'services/round-engine/verify-cli.ts',
        '--game',
        'crash',
        '--round',
        String(latest.body.round_id),
      ],
      { cwd: ROOT, env: { ...process.env, ...env }, timeout: 60_000 },
    );
    expect(stdout).toMatch(/OK/);
  }, 90_000);

  it('loses and doubles nothing when the projector is killed with SIGKILL and restarted', async () => {
    await new Promise((r) => setTimeout(r, 1500));
    expect(await services.projector?.stop('SIGKILL')).toBe('SIGKILL');
    await new Promise((r) => setTimeout(r, 2000)); // rounds keep coming while it is down
    services.projector = startService('services/projector/main.ts', env);
    await new Promise((r) => setTimeout(r, 2000));
    await services.engine?.stop('SIGTERM');

    // Finished rounds only: the topic also holds each round's lifecycle events.
    const log = await roundsInLog(kafka, topicName(config, 'rounds'));
    const total = [...log.values()].reduce((n, ids) => n + ids.length, 0);
    await waitFor(
      'the projector to catch up with the log',
      async () => {
        const [row] = await sql`select count(*)::int as n from rounds`;
        const n = Number(row?.n ?? 0);
        return n === total ? n : undefined;
      },
      60_000,
      500,
    );
    const perGame = await sql`
      select game_slug, count(*)::int as n, count(distinct round_id)::int as d,
             (max(round_id) - min(round_id) + 1)::int as span
      from rounds group by game_slug order by game_slug`;
    expect(perGame).toHaveLength(4);
    for (const g of perGame) {
      expect(g.n).toBe(g.d); // no duplicate
      expect(g.n).toBe(g.span); // no gap: sequences are consecutive
    }
    const games = await sql`select slug, last_round::text from games order by id`;
    const maxes =
      await sql`select game_slug as slug, max(round_id)::text as m from rounds group by game_slug`;
    for (const g of games) expect(g.last_round).toBe(maxes.find((m) => m.slug === g.slug)?.m);
  }, 120_000);
});
