/**
 * The round engine (issue item 5): for each configured game, an independent loop that decides
 * the next round (decider.ts), waits its duration divided by ROUND_SPEED, and appends the
 * RoundFinished record to the `rounds` topic (appender.ts). At start every game's position is
 * recovered from the log tail (log-tail.ts), so a restart continues the sequences and chains
 * with no gap and no duplicate. One engine per topic namespace: two engines on the same topic
 * would both append the same next sequence.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Kafka } from 'kafkajs';
import { ensureTopics, topicName } from '../../lib/log/topics.ts';
import type { Logger } from '../../lib/logger.ts';
import type { GameSlug } from '../../rules/games/catalog.ts';
import {
  type ChainSource,
  cachedChains,
  evolve,
  finish,
  type GameState,
  nextPosition,
  nextRound,
  sequenceOf,
} from '../../rules/rounds/decider.ts';
import { bettingMsOf } from '../../rules/rounds/lifecycle.ts';
import { type Appender, createAppender } from './appender.ts';
import type { EngineConfig } from './config.ts';
import { buildEngineHttp, type FairnessInfo } from './http.ts';
import { recoverStates } from './log-tail.ts';
import { createMetrics } from './metrics.ts';
import { loadServerSeed } from './seed.ts';

export interface RoundEngineDeps {
  readonly config: EngineConfig;
  readonly kafka: Kafka;
  readonly logger: Logger;
  /** Unix ms; Date.now by default. */
  readonly clock?: () => number;
  /** Called when a game loop fails for a reason other than stopping (a bug, not the broker); main exits. */
  readonly onFatal?: (err: unknown) => void;
}

export interface RoundEngine {
  /** Recovers from the log, starts the HTTP listener and the game loops. @throws when the broker or port is unavailable. */
  start(): Promise<void>;
  /** Stops the loops (a round being appended is awaited, at most ~5 s), the producers and the listener. */
  stop(): Promise<void>;
  /** Bound HTTP port, once started. */
  port(): number | undefined;
  /** Current state of every game (last appended round). */
  states(): GameState[];
  fairness(): FairnessInfo[];
  readonly http: ReturnType<typeof buildEngineHttp>;
}

export function buildRoundEngine(deps: RoundEngineDeps): RoundEngine {
  const { config, kafka } = deps;
  const clock = deps.clock ?? Date.now;
  const logger = deps.logger.child({ component: 'round-engine' });
  const topic = topicName(config, 'rounds');
  const games = config.engine.games;
  const metrics = createMetrics();
  const states = new Map<GameSlug, GameState>();
  const appenders = new Map<GameSlug, Appender>();
  const loops: Promise<void>[] = [];
  const abort = new AbortController();
  let chains: ChainSource | null = null;
  let running = false;
  let boundPort: number | undefined;

  function fairness(): FairnessInfo[] {
    if (!chains) return [];
    const src = chains;
    return [...states.values()].map((s) => {
      const { epoch, index } = nextPosition(s, src);
      const chain = src(s.slug, epoch);
      return {
        slug: s.slug,
        chain_epoch: epoch,
        commitment: chain.commitment,
        chain_length: chain.length,
        next_index: index,
      };
    });
  }

  async function landed(slug: GameSlug, roundId: number): Promise<boolean> {
    const found = await recoverStates(kafka, topic, [slug], { logger });
    return (found.get(slug)?.sequence ?? 0) >= sequenceOf(slug, roundId);
  }

  async function loop(slug: GameSlug, src: ChainSource): Promise<void> {
    const appender = appenders.get(slug) as Appender;
    const log = logger.child({ game: slug });
    while (!abort.signal.aborted) {
      const pending = nextRound(states.get(slug) as GameState, src);
      try {
        const durationMs = bettingMsOf(slug) + pending.resultMs;
        await sleep(durationMs / config.engine.speed, undefined, { signal: abort.signal });
        const round = finish(pending, clock());
        await appender.append(round, abort.signal);
        states.set(slug, evolve(states.get(slug) as GameState, round));
        log.debug({ round_id: round.round_id, result: round.result }, 'round appended');
      } catch (err) {
        if (abort.signal.aborted) return;
        throw err;
      }
    }
  }

  const http = buildEngineHttp({
    metrics,
    status: () => ({
      running,
      producersConnected: appenders.size > 0 && [...appenders.values()].every((a) => a.connected()),
    }),
    fairness,
  });

  return {
    http,
    port: () => boundPort,
    states: () => [...states.values()],
    fairness,
    async start() {
      await http.listen({ host: config.ops.host, port: config.engine.port });
      const addr = http.server.address();
      boundPort = typeof addr === 'object' && addr ? addr.port : undefined;
      const { seed, source } = await loadServerSeed(config.engine, logger);
      const admin = kafka.admin();
      await admin.connect();
      try {
        await ensureTopics(admin, config, ['rounds']);
      } finally {
        await admin.disconnect();
      }
      const started = clock();
      for (const [slug, s] of await recoverStates(kafka, topic, games, { logger })) states.set(slug, s);
      chains = cachedChains(seed, config.engine.chainLength);
      const published = fairness();
      logger.info(
        { seedSource: source, recoveredInMs: clock() - started, speed: config.engine.speed, port: boundPort },
        'round engine recovered',
      );
      for (const f of published) logger.info(f, 'chain commitment');
      for (const slug of games) {
        const appender = createAppender({
          kafka,
          topic,
          slug,
          logger: logger.child({ game: slug }),
          metrics,
          clock,
          landed: (round) => landed(slug, round.round_id),
        });
        await appender.connect();
        appenders.set(slug, appender);
      }
      const src = chains;
      for (const slug of games) {
        const p = loop(slug, src).catch((err: unknown) => {
          logger.fatal({ err, game: slug }, 'game loop failed');
          running = false;
          deps.onFatal?.(err);
        });
        loops.push(p);
      }
      running = true;
    },
    async stop() {
      running = false;
      abort.abort(new Error('round engine stopping'));
      await Promise.all(loops);
      await Promise.all([...appenders.values()].map((a) => a.close()));
      await http.close();
    },
  };
}
