/**
 * Broker drill: a PRIVATE Kafka (tests/support/private-infra.ts) is killed with
 * SIGKILL for 10 s while rounds flow, then started again. The round engine retries its appends
 * (the log ends with no gap and no duplicate), the edge and the projector resume by themselves,
 * SSE subscribers — some of them cut off and resuming with Last-Event-ID while the broker is down —
 * miss and repeat nothing, and the read model holds every round of the log exactly once. The shared
 * broker is never touched; the database is the shared one, in a schema of its own.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { topicName } from '../../lib/log/topics.ts';
import {
  createDrillEnv,
  type DrillEnv,
  logGaps,
  recordCount,
  roundsInLog,
  roundsPerGame,
} from '../support/drill.ts';
import { sampleSum } from '../support/metrics.ts';
import { waitFor } from '../support/poll.ts';
import { type PrivateKafka, startPrivateKafka } from '../support/private-infra.ts';
import { freePort, statusOf, waitReady } from '../support/processes.ts';
import { clientProblems, type ResumingSse, resumingSse, SSE_SUBSCRIPTIONS } from '../support/resuming-sse.ts';

const OUTAGE_MS = 10_000;

let kafka: PrivateKafka | undefined;
let d: DrillEnv | undefined;
const clients: { c: ResumingSse; games: readonly string[] }[] = [];

beforeAll(async () => {
  kafka = await startPrivateKafka();
  d = await createDrillEnv('broker', { KAFKA_BROKERS: kafka.brokers }, { privateBroker: true });
}, 120_000);

afterAll(async () => {
  for (const { c } of clients) c.close();
  await d?.close();
  await kafka?.close();
}, 120_000);

describe('broker killed for 10 s while rounds flow', () => {
  it('loses and doubles no round in the log, the read model or any resuming SSE subscriber', async () => {
    const env = d as DrillEnv;
    const broker = kafka as PrivateKafka;
    const topic = topicName(env.config, 'rounds');
    const [enginePort, projectorPort] = [await freePort(), await freePort()];
    const engine = env.start('services/round-engine/main.ts', {
      ROUND_SPEED: '40',
      ROUND_ENGINE_PORT: String(enginePort),
    });
    env.start('services/projector/main.ts', { PROJECTOR_PORT: String(projectorPort) });
    try {
      await waitFor(
        'rounds of every game',
        async () => ((await roundsInLog(env.kafka, topic)).size === 4 ? true : undefined),
        60_000,
        500,
      );
      const edge = await env.startEdge();
      for (const s of SSE_SUBSCRIPTIONS)
        for (let k = 0; k < 2; k++) clients.push({ c: resumingSse([edge.httpPort], s.path), games: s.games });
      await Promise.all(clients.map(({ c }) => c.ready));
      await sleep(2000);

      const before = await recordCount(env.kafka, topic);
      broker.kill();
      const killedAt = performance.now();
      // Half the subscribers lose their connection during the outage and resume on the same edge.
      await sleep(OUTAGE_MS / 2);
      clients.forEach(({ c }, i) => {
        if (i % 2 === 0) c.drop();
      });
      const projectorDuring = await statusOf(`http://127.0.0.1:${projectorPort}/ready`);
      await sleep(OUTAGE_MS - (performance.now() - killedAt));
      await broker.start();
      const downMs = performance.now() - killedAt;
      await waitFor(
        '40 more rounds after the broker is back',
        async () => ((await recordCount(env.kafka, topic)) >= before + 40 ? true : undefined),
        120_000,
        500,
      );
      const retries = sampleSum(
        await (await fetch(`http://127.0.0.1:${enginePort}/metrics`)).text(),
        'round_engine_send_retries_total',
      );
      expect(await engine.stop('SIGTERM')).toBe(0);

      const log = await roundsInLog(env.kafka, topic);
      const total = [...log.values()].reduce((n, l) => n + l.length, 0);
      expect(logGaps(log)).toEqual([]); // the engine's retries neither lost nor doubled a round
      const problems = () => clientProblems(clients, log);
      await waitFor(
        'every subscriber to have every round',
        () => (problems().length === 0 ? true : undefined),
        60_000,
        250,
      ).catch(() => {});
      expect(problems()).toEqual([]);
      for (const { c } of clients) expect(c.lateInitials).toBe(0);
      await waitFor(
        'the read model to hold the whole log',
        async () => {
          const [r] = await env.sql<{ n: number }[]>`select count(*)::int as n from rounds`;
          return r?.n === total ? true : undefined;
        },
        120_000,
        500,
      );
      for (const g of await roundsPerGame(env.sql))
        expect(g).toEqual({ slug: g.slug, n: log.get(g.slug)?.length, d: g.n, span: g.n });
      // Ready again after the outage (each reconnects on its own schedule): within 30 s.
      await waitReady(`http://127.0.0.1:${projectorPort}/ready`, 30_000);
      await waitReady(`http://127.0.0.1:${edge.httpPort}/ready`, 30_000);
      expect(retries).toBeGreaterThan(0);
      console.info(
        `broker drill: broker down ${Math.round(downMs)} ms (killed, ${OUTAGE_MS} ms, then restarted); engine send retries ${retries}; projector /ready during the outage ${projectorDuring}; ${total} rounds, read model and ${clients.length} subscribers complete; ${clients.reduce((n, { c }) => n + c.connects - 1, 0)} resumes`,
      );
    } catch (err) {
      throw new Error(`${(err as Error).message}\n${env.logs()}`);
    }
  }, 300_000);
});
