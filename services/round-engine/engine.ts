/**
 * The round engine: for each configured game an independent loop of rounds with their lifecycle
 * (game-loop.ts: RoundOpened, BettingClosed, the crash flight and its cash-outs, RoundFinished on
 * the `rounds` topic through appender.ts), and the HTTP endpoints (http.ts), among them the
 * internal cash-out decision the API asks for. At start every game's position, and a round left
 * open by a stop, are recovered from the log tail (log-tail.ts), so a restart continues the
 * sequences and chains with no gap and no duplicate. One engine per topic namespace: two engines
 * on the same topic would both append the same next sequence.
 */
import type { Kafka } from 'kafkajs';
import { loadTokenSecret } from '../../lib/auth/token-secret.ts';
import { ensureTopics, topicName } from '../../lib/log/topics.ts';
import type { Logger } from '../../lib/logger.ts';
import type { GameSlug } from '../../rules/games/catalog.ts';
import { type ChainSource, cachedChains, type GameState, nextPosition } from '../../rules/rounds/decider.ts';
import { type Appender, createAppender } from './appender.ts';
import type { EngineConfig } from './config.ts';
import { type CashOutAnswer, GameLane, runGameLoop } from './game-loop.ts';
import { buildEngineHttp, type FairnessInfo } from './http.ts';
import { eventLanded, recoverOpenRounds, recoverStates } from './log-tail.ts';
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
  /** Decides a manual cash-out of bet `txId` on the crash round `roundId` now (also POST /internal/cash-out). */
  cashOut(game: GameSlug, roundId: number, txId: number): Promise<CashOutAnswer>;
  readonly http: ReturnType<typeof buildEngineHttp>;
}

export function buildRoundEngine(deps: RoundEngineDeps): RoundEngine {
  const { config, kafka } = deps;
  const clock = deps.clock ?? Date.now;
  const logger = deps.logger.child({ component: 'round-engine' });
  const topic = topicName(config, 'rounds');
  const games = config.engine.games;
  const metrics = createMetrics();
  const lanes = new Map<GameSlug, GameLane>();
  const appenders = new Map<GameSlug, Appender>();
  const loops: Promise<void>[] = [];
  const abort = new AbortController();
  let chains: ChainSource | null = null;
  let running = false;
  let boundPort: number | undefined;
  let secret: Buffer | null = null;

  const states = () => [...lanes.values()].map((l) => l.state);

  function fairness(): FairnessInfo[] {
    if (!chains) return [];
    const src = chains;
    return states().map((s) => {
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

  /** The cash-out decision of a bet: only while its round flies, by this engine's clock. */
  function cashOut(game: GameSlug, roundId: number, txId: number): Promise<CashOutAnswer> {
    const lane = lanes.get(game);
    return lane ? lane.cashOut(roundId, txId, clock()) : Promise.resolve({ status: 'not-flying' });
  }

  const http = buildEngineHttp({
    metrics,
    status: () => ({
      running,
      producersConnected: appenders.size > 0 && [...appenders.values()].every((a) => a.connected()),
    }),
    fairness,
    cashOut,
    secret: () => secret,
  });

  return {
    http,
    port: () => boundPort,
    states,
    fairness,
    cashOut,
    async start() {
      secret = await loadTokenSecret(config.auth);
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
      const recovered = await recoverStates(kafka, topic, games, { logger });
      const open = await recoverOpenRounds(kafka, topic, games, { logger });
      chains = cachedChains(seed, config.engine.chainLength);
      for (const slug of games) {
        const appender = createAppender({
          kafka,
          topic,
          slug,
          logger: logger.child({ game: slug }),
          metrics,
          clock,
          landed: (event) => eventLanded(kafka, topic, event, { logger }),
        });
        await appender.connect();
        appenders.set(slug, appender);
        lanes.set(slug, new GameLane(slug, appender, recovered.get(slug) as GameState, abort.signal));
      }
      logger.info(
        {
          seedSource: source,
          recoveredInMs: clock() - started,
          speed: config.engine.speed,
          port: boundPort,
          open: [...open.values()].map((o) => o.opened.round_id),
        },
        'round engine recovered',
      );
      for (const f of fairness()) logger.info(f, 'chain commitment');
      const src = chains;
      for (const slug of games) {
        const p = runGameLoop({
          lane: lanes.get(slug) as GameLane,
          chains: src,
          bettingMs: config.engine.bettingMs,
          speed: config.engine.speed,
          clock,
          signal: abort.signal,
          log: logger.child({ game: slug }),
          ...(open.has(slug) ? { open: open.get(slug) } : {}),
        }).catch((err: unknown) => {
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
