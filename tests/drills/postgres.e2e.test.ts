/**
 * Postgres drill: a PRIVATE Postgres (tests/support/private-infra.ts) is stopped
 * for 10 s under the projector and the API while rounds flow, then started again. While it is down
 * the game list answers 503 with its error body, latest and history answer the API's in-memory window
 * (the newest rows the read model had committed, unchanged while nothing can commit), and
 * both /ready endpoints say 503; once it is back
 * the projector resumes from its checkpoint and the read model ends with every round of the log
 * exactly once. The shared database is never touched; the broker is the shared one, in a
 * namespace of its own.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSql } from '../../lib/db/pool.ts';
import { partitionOffsets } from '../../lib/log/kafka.ts';
import { topicName } from '../../lib/log/topics.ts';
import { type Config, loadConfig } from '../support/config.ts';
import {
  createDrillEnv,
  type DrillEnv,
  logGaps,
  recordCount,
  roundsInLog,
  roundsPerGame,
} from '../support/drill.ts';
import { waitFor } from '../support/poll.ts';
import { type PrivatePostgres, startPrivatePostgres } from '../support/private-infra.ts';
import { freePort, statusOf } from '../support/processes.ts';

const OUTAGE_MS = 10_000;
let pg: PrivatePostgres | undefined;
let d: DrillEnv | undefined;

beforeAll(async () => {
  pg = await startPrivatePostgres();
  d = await createDrillEnv('postgres', { DATABASE_URL: pg.url });
}, 120_000);

afterAll(async () => {
  await d?.close();
  await pg?.close();
}, 120_000);

async function getJson(url: string): Promise<{ status: number; body: unknown }> {
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(5000) });
    return { status: res.status, body: await res.json() };
  } catch (err) {
    return { status: 0, body: String(err) };
  }
}

describe('Postgres restarted under the projector and the API', () => {
  it('answers the game list 503 and latest/history from the window while it is down; the projector resumes with no loss and no duplicate', async () => {
    const env = d as DrillEnv;
    const db = pg as PrivatePostgres;
    const topic = topicName(env.config, 'rounds');
    const [apiPort, projectorPort] = [await freePort(), await freePort()];
    const api = `http://127.0.0.1:${apiPort}`;
    const projectorReady = `http://127.0.0.1:${projectorPort}/ready`;
    const engine = env.start('services/round-engine/main.ts', { ROUND_SPEED: '40' });
    const projector = env.start('services/projector/main.ts', { PROJECTOR_PORT: String(projectorPort) });
    const apiSvc = env.start('services/api/main.ts', { API_PORT: String(apiPort) });
    try {
      await waitFor(
        'a round of every game through the API',
        async () => {
          const { status, body } = await getJson(`${api}/api/games`);
          const games = body as { last_round: number | null }[];
          return status === 200 && games.length === 4 && games.every((g) => g.last_round !== null)
            ? true
            : undefined;
        },
        90_000,
        500,
      );
      const stoppedAt = performance.now();
      await db.stop();
      const seen = { rest: new Map<string, number>(), apiReady: 0, projectorReady: 0 };
      const downBody: unknown[] = [];
      const windowBodies = new Map<string, Set<string>>();
      while (performance.now() - stoppedAt < OUTAGE_MS) {
        for (const path of ['/api/games', '/api/history/crash?limit=5', '/api/latest/slot']) {
          const r = await getJson(`${api}${path}`);
          if (r.status === 503) downBody.push(r.body);
          if (r.status === 200)
            windowBodies.set(path, (windowBodies.get(path) ?? new Set()).add(JSON.stringify(r.body)));
          seen.rest.set(`${path} ${r.status}`, (seen.rest.get(`${path} ${r.status}`) ?? 0) + 1);
        }
        if ((await statusOf(`${api}/ready`)) === 503) seen.apiReady++;
        if ((await statusOf(projectorReady)) === 503) seen.projectorReady++;
        await new Promise((r) => setTimeout(r, 250));
      }
      const before = await recordCount(env.kafka, topic);
      await db.start();
      const downMs = performance.now() - stoppedAt;

      // While it was down: the game list answered the 503 error body, latest and history the window
      // (one unchanged body each: nothing could commit), and both /ready said 503.
      expect([...seen.rest.keys()].filter((k) => !k.endsWith(' 503') && !k.endsWith(' 200'))).toEqual([]);
      expect([...seen.rest.keys()].filter((k) => k.startsWith('/api/games ') && !k.endsWith(' 503'))).toEqual(
        [],
      );
      expect([...windowBodies.keys()].sort()).toEqual(['/api/history/crash?limit=5', '/api/latest/slot']);
      for (const bodies of windowBodies.values()) expect(bodies.size).toBe(1);
      expect(downBody.length).toBeGreaterThan(0);
      for (const b of downBody) expect(b).toEqual({ error: 'Service Unavailable', success: false });
      expect(seen.apiReady).toBeGreaterThan(0);
      expect(seen.projectorReady).toBeGreaterThan(0);

      await waitFor(
        'both /ready back to 200',
        async () =>
          (await statusOf(`${api}/ready`)) === 200 && (await statusOf(projectorReady)) === 200
            ? true
            : undefined,
        60_000,
        250,
      );
      await waitFor(
        '20 more rounds',
        async () => ((await recordCount(env.kafka, topic)) >= before + 20 ? true : undefined),
        60_000,
        250,
      );
      expect(await engine.stop('SIGTERM')).toBe(0);
      const log = await roundsInLog(env.kafka, topic);
      expect(logGaps(log)).toEqual([]);
      const total = [...log.values()].reduce((n, l) => n + l.length, 0);

      // A fresh pool: the drill's own connections died with the server.
      const config: Config = loadConfig({ ...process.env, ...env.env });
      const sql = createSql(config, { max: 1 });
      try {
        await waitFor(
          'the read model to hold the whole log',
          async () => {
            const [r] = await sql<{ n: number }[]>`select count(*)::int as n from rounds`;
            return r?.n === total ? true : undefined;
          },
          60_000,
          250,
        );
        const perGame = await roundsPerGame(sql);
        expect(perGame).toHaveLength(4);
        for (const g of perGame)
          expect(g).toEqual({ slug: g.slug, n: log.get(g.slug)?.length, d: g.n, span: g.n });
        const cps = await sql<{ partition: number; offset: string }[]>`
          select "partition", "offset"::text as "offset" from projection_checkpoints where projection = 'rounds'`;
        for (const [p, o] of await partitionOffsets(env.kafka, topic))
          if (o.high > 0n) expect(cps.find((c) => c.partition === p)?.offset).toBe(String(o.high));
      } finally {
        await sql.end({ timeout: 2 });
      }
      const games = await getJson(`${api}/api/games`);
      expect(games.status).toBe(200);
      expect(await projector.stop('SIGTERM')).toBe(0);
      expect(await apiSvc.stop('SIGTERM')).toBe(0);
      console.info(
        `postgres drill: down ${Math.round(downMs)} ms; answers while down ${JSON.stringify(Object.fromEntries(seen.rest))}; /ready 503 seen api ${seen.apiReady}, projector ${seen.projectorReady}; ${total} rounds, read model complete`,
      );
    } catch (err) {
      throw new Error(`${(err as Error).message}\n${env.logs()}`);
    }
  }, 300_000);
});
