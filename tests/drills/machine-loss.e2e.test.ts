/**
 * A machine lost: two complete sets of the services that scale (api, edge, projector, settlement,
 * wallet-saga), as two machines would run them, on one broker and one Postgres (the stack of
 * tests/browser/stack.ts is set A, with the round engine, the sandbox and the bots; set B is started
 * beside it from the same environment, own ports, same consumer groups). Under load (engine at speed
 * 10, bots betting through set A's API, a REST client and stream clients that know both sets and
 * start on B) every process of set B is SIGKILLed at once. Set A takes over B's partitions, the
 * subscribers resume on A's edge with every round once and in order, every bet reaches its end, none
 * paid twice or lost (the sandbox ledger reconciles), and the REST errors of the takeover are
 * counted and printed (docs/deployment.md).
 */

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { createKafka } from '../../lib/log/kafka.ts';
import { topicName } from '../../lib/log/topics.ts';
import { createLogger } from '../../lib/logger.ts';
import { grpcTransport } from '../../packages/client/src/grpc.ts';
import { sseTransport, websocketTransport } from '../../packages/client/src/index.ts';
import { type StackWithWallet, startStack } from '../browser/stack.ts';
import { nodeClient } from '../support/client-page.ts';
import {
  awaitReadModelOf,
  finishedRounds,
  openBets,
  roundIds,
  subscriberProblems,
} from '../support/cluster-drill.ts';
import { logGaps, recordCount } from '../support/drill.ts';
import { waitFor } from '../support/poll.ts';
import { freePort, type Service, startService, waitReady } from '../support/processes.ts';
import { expectSettled } from '../support/wallet-faults.ts';

const GAMES = ['crash', 'double', 'slot', 'wall-street'] as const;
const SUBS = GAMES.map((game) => ({ game }));
const SUB_GAMES = Object.fromEntries(GAMES.map((g) => [`game:${g}`, [g]]));

let stack: StackWithWallet | undefined;
const setB: Service[] = [];
const clients: { name: string; c: ReturnType<typeof nodeClient> }[] = [];

beforeAll(async () => {
  stack = await startStack({
    wallet: true,
    roundSpeed: 10,
    bots: { players: 4, betIntervalMs: 300 },
    env: { AUTH_REQUIRE_GRPC: 'false' },
  });
}, 300_000);

afterAll(async () => {
  for (const { c } of clients) c.close();
  await Promise.all(setB.map((s) => s.stop('SIGKILL')));
  await stack?.stop().catch(() => {});
}, 180_000);

/**
 * A REST client behind a balancer that marks an upstream down on a failed request: GETs
 * /api/games every 50 ms on the first of `bases`, moving to the next one after a failure.
 */
function restLoad(bases: readonly string[]): { errors: string[]; ok: number; stop(): Promise<void> } {
  const state = { errors: [] as string[], ok: 0, running: true };
  let i = 0;
  const loop = (async () => {
    while (state.running) {
      const base = bases[i % bases.length] as string;
      try {
        const res = await fetch(`${base}/api/games`, { signal: AbortSignal.timeout(5000) });
        await res.body?.cancel();
        if (res.status === 200) state.ok++;
        else {
          state.errors.push(`${base} ${res.status}`);
          i++;
        }
      } catch (err) {
        state.errors.push(`${base} ${(err as Error).message}`);
        i++;
      }
      await new Promise((r) => setTimeout(r, 50));
    }
  })();
  return {
    errors: state.errors,
    get ok() {
      return state.ok;
    },
    async stop() {
      state.running = false;
      await loop;
    },
  };
}

describe('a machine lost: every process of one of two sets SIGKILLed under load', () => {
  it('the other set takes over partitions and clients; no round or bet lost or doubled', async () => {
    const s = stack as StackWithWallet;
    const kafka = createKafka(s.config, 'machine-drill', createLogger('drill', 'silent'));
    const roundsTopic = topicName(s.config, 'rounds');
    try {
      // Set B: the same services with the stack's environment, on ports of their own.
      const [api, edgeHttp, edgeWs, grpc, saga, settlement] = await Promise.all(
        Array.from({ length: 6 }, () => freePort()),
      );
      const env = {
        ...s.env,
        API_PORT: String(api),
        EDGE_HTTP_PORT: String(edgeHttp),
        EDGE_WS_PORT: String(edgeWs),
        GRPC_PORT: String(grpc),
        WALLET_SAGA_HTTP_PORT: String(saga),
        SETTLEMENT_HTTP_PORT: String(settlement),
        PROJECTOR_PORT: '0',
      };
      for (const entry of ['api', 'edge', 'projector', 'settlement', 'wallet-saga'])
        setB.push(startService(`services/${entry}/main.ts`, env));
      for (const port of [api, edgeHttp, saga, settlement])
        await waitReady(`http://127.0.0.1:${port}/ready`, 120_000, 250);

      const edgeA = `http://127.0.0.1:${s.edgeHttpPort}`;
      const edgeB = `http://127.0.0.1:${edgeHttp}`;
      const wsOf: Record<string, string> = {
        [edgeA]: `ws://127.0.0.1:${s.edgeWsPort}/ws/`,
        [edgeB]: `ws://127.0.0.1:${edgeWs}/ws/`,
      };
      const grpcOf: Record<string, string> = {
        [edgeA]: `127.0.0.1:${s.grpcPort}`,
        [edgeB]: `127.0.0.1:${grpc}`,
      };
      // Every client starts on set B's edge and knows set A's.
      const bases = [edgeB, edgeA];
      clients.push(
        { name: 'sse', c: nodeClient(sseTransport(), bases, SUBS) },
        {
          name: 'websocket',
          c: nodeClient(
            websocketTransport({
              url: (b) => wsOf[b] as string,
              WebSocket: WebSocket as unknown as typeof globalThis.WebSocket,
            }),
            bases,
            SUBS,
          ),
        },
        { name: 'grpc', c: nodeClient(grpcTransport({ address: (b) => grpcOf[b] as string }), bases, SUBS) },
      );
      await waitFor(
        'every subscriber subscribed to every game',
        () =>
          clients.every(({ c }) => Object.keys(c.record.starts).length === GAMES.length) ? true : undefined,
        60_000,
        200,
      );
      const apiA = `http://127.0.0.1:${s.env.API_PORT}`;
      const rest = restLoad([`http://127.0.0.1:${api}`, apiA]);
      const moreRounds = async (what: string, n: number) => {
        const from = await recordCount(kafka, roundsTopic);
        await waitFor(
          what,
          async () => ((await recordCount(kafka, roundsTopic)) >= from + n ? true : undefined),
          180_000,
          250,
        );
      };
      await moreRounds('rounds with both sets', 20);
      // Both sets hold partitions: each group has a member of each set.
      const groups = [
        s.env.PROJECTOR_GROUP as string,
        s.env.SETTLEMENT_GROUP as string,
        s.env.WALLET_SAGA_GROUP as string,
      ];
      const members = async () => {
        const admin = kafka.admin();
        await admin.connect();
        try {
          const { groups: described } = await admin.describeGroups(groups);
          return described.map((g) => `${g.groupId} ${g.state} ${g.members.length}`);
        } finally {
          await admin.disconnect();
        }
      };
      await waitFor(
        'two members in every group',
        async () => ((await members()).every((m) => m.endsWith(' Stable 2')) ? true : undefined),
        60_000,
        500,
      ).catch(async () => {
        throw new Error(`groups not shared by both sets: ${(await members()).join(', ')}`);
      });

      // Machine B is lost: every process of its set at once.
      const lostAt = Date.now();
      for (const svc of setB) svc.child.kill('SIGKILL');
      await moreRounds('rounds after the loss', 60);
      await rest.stop();
      const restErrors = rest.errors.length;

      const exited = Object.entries(s.services).filter(([, svc]) => svc.child.exitCode !== null);
      expect(exited.map(([n]) => n)).toEqual([]);
      await s.stopOne('bots');
      const report = await expectSettled(s, [], 180_000);
      await s.stopOne('engine');
      expect(s.services.engine?.child.exitCode).toBe(0);

      const rounds = await finishedRounds(kafka, roundsTopic);
      const log = roundIds(rounds);
      expect(logGaps(log)).toEqual([]);
      await awaitReadModelOf(s.wallet.sql, rounds.length);
      expect(await subscriberProblems(clients, log, SUB_GAMES)).toEqual([]);
      for (const { name, c } of clients)
        expect(
          c.record.states.filter((st) => st.startsWith('reconnecting')).length,
          name,
        ).toBeGreaterThanOrEqual(1);
      // Set A alone in every group after the takeover.
      expect((await members()).map((m) => m.split(' ')[2])).toEqual(groups.map(() => '1'));
      expect(await openBets(s.wallet.sql)).toBe(0);
      console.info(
        `machine-loss drill: set B (api, edge, projector, settlement, wallet-saga) SIGKILLed ${Date.now() - lostAt} ms before the checks; ` +
          `REST: ${rest.ok} answered 200, ${restErrors} errors during the takeover (${[...new Set(rest.errors.map((e) => e.replace(/\d{4,5}/, 'port')))].join('; ') || 'none'}); ` +
          `${rounds.length} rounds, ${report.bets} bets reconciled; ${clients.length} subscribers resumed on set A with every round once`,
      );
    } catch (err) {
      throw new Error(
        `${(err as Error).stack}\n${s.logs()}\n${setB.map((b) => b.output().slice(-2000)).join('\n')}`,
      );
    }
  }, 900_000);
});
