/**
 * Rolling restart of the edge under load: a fast round engine, two edge
 * processes, and SSE subscribers (per game and per type) that fail over to the other edge and
 * resume with Last-Event-ID whenever their stream ends. Edge 1 is stopped with SIGTERM (its streams
 * are ended over EDGE_DRAIN_MS), started again, then edge 2 the same way. At the end every
 * subscriber holds every round appended after it connected, exactly once and in order per game,
 * as the rounds topic has them. Runs on the shared broker in a namespace of its own.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { topicName } from '../../lib/log/topics.ts';
import {
  awaitRoundsOfEveryGame,
  createDrillEnv,
  type DrillEnv,
  type EdgeProcess,
  recordCount,
  roundsInLog,
} from '../support/drill.ts';
import { waitFor } from '../support/poll.ts';
import { timedStop } from '../support/processes.ts';
import { clientProblems, type ResumingSse, resumingSse, SSE_SUBSCRIPTIONS } from '../support/resuming-sse.ts';

const DRAIN_MS = 1500;

let d: DrillEnv;
const clients: { c: ResumingSse; games: readonly string[] }[] = [];

beforeAll(async () => {
  d = await createDrillEnv('rolling');
});

afterAll(async () => {
  for (const { c } of clients) c.close();
  await d?.close();
}, 60_000);

describe('rolling restart of two edges under load', () => {
  it('loses and repeats no round for SSE subscribers that resume', async () => {
    const topic = topicName(d.config, 'rounds');
    const engine = d.start('services/round-engine/main.ts', { ROUND_SPEED: '60' });
    await awaitRoundsOfEveryGame(d.kafka, topic);
    let edges: EdgeProcess[] = [];
    try {
      const edgeEnv = { EDGE_DRAIN_MS: String(DRAIN_MS) };
      edges = [await d.startEdge(edgeEnv), await d.startEdge(edgeEnv)];
      const ports = edges.map((e) => e.httpPort);
      // Two subscribers per subscription, one starting on each edge.
      for (const s of SSE_SUBSCRIPTIONS)
        for (const first of [0, 1]) clients.push({ c: resumingSse(ports, s.path, first), games: s.games });
      await Promise.all(clients.map(({ c }) => c.ready));
      await sleep(2000);

      for (const i of [0, 1]) {
        const edge = edges[i] as EdgeProcess;
        const before = await recordCount(d.kafka, topic);
        const t = performance.now();
        const { code, ms: stopMs } = await timedStop(edge.svc, DRAIN_MS + 30_000);
        expect(code).toBe(0);
        expect(stopMs).toBeGreaterThanOrEqual(DRAIN_MS * 0.5); // the streams were ended over the window
        edges[i] = await edge.restart();
        const during = (await recordCount(d.kafka, topic)) - before;
        console.info(
          `rolling restart: edge ${i + 1} stopped in ${Math.round(stopMs)} ms and was ready again after ${Math.round(performance.now() - t)} ms; ${during} rounds appended meanwhile`,
        );
        await sleep(1500);
      }
      await sleep(1000);
      expect(await engine.stop('SIGTERM')).toBe(0);

      const log = await roundsInLog(d.kafka, topic);
      const problems = await waitFor(
        'every subscriber to have every round',
        () => {
          const all = clientProblems(clients, log);
          return all.length === 0 ? all : undefined;
        },
        30_000,
        250,
      ).catch(() => clientProblems(clients, log));
      expect(problems).toEqual([]);
      for (const { c } of clients) {
        expect(c.connects).toBeGreaterThanOrEqual(2); // each one was moved at least once
        expect(c.lateInitials).toBe(0); // and every resume was honoured
      }
      const delivered = clients.reduce((n, { c }) => n + [...c.rounds.values()].flat().length, 0);
      const reconnects = clients.reduce((n, { c }) => n + c.connects - 1, 0);
      console.info(
        `rolling restart: ${[...log.values()].flat().length} rounds in the log, ${delivered} deliveries to ${clients.length} subscribers, ${reconnects} resumes, none lost or repeated`,
      );
    } catch (err) {
      throw new Error(`${(err as Error).message}\n${d.logs()}`);
    }
  }, 240_000);
});
