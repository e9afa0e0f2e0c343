/**
 * Each game's current round phase (betting, running, finished) read from the `rounds` topic, not
 * from a read model that lags (issue 11 item 4: "known from the lifecycle read from the log"). The
 * API asks it whether a bet may be taken and which flight a cash-out belongs to.
 *
 * Like an edge's source (lib/stream/source.ts): its own consumer group per process that commits
 * nothing; at start the newest lifecycle of each game is found by reading the log tail backwards,
 * then every partition is followed live from the high-water marks captured before the scan.
 */
import { randomUUID } from 'node:crypto';
import type { Consumer, Kafka } from 'kafkajs';
import { GAME_SLUGS, type GameSlug } from '../../rules/games/catalog.ts';
import { evolvePhase, type Phase } from '../../rules/rounds/lifecycle.ts';
import type { RoundEvent } from '../../rules/rounds/round.ts';
import type { SharedConfig } from '../config/shared.ts';
import type { Logger } from '../logger.ts';
import { partitionOffsets } from './kafka.ts';
import { decodeRoundEvent } from './rounds-codec.ts';
import { scanBackward } from './rounds-log.ts';
import { topicName } from './topics.ts';

/** Broker fetch wait, ms: every ms here is how late a closed window is seen. */
const FETCH_MAX_WAIT_MS = 20;

export interface RoundPhases {
  /** The phase of `game`'s current round, or undefined before its first round is seen. */
  phase(game: GameSlug): Phase | undefined;
  /** True once the live consumer follows the log. */
  readonly ready: boolean;
  /** Scans the tail, then follows the log. @throws when the broker or the topic is unreachable. */
  start(): Promise<void>;
  stop(): Promise<void>;
}

/** Builds the view; nothing connects until `start()`. */
export function createRoundPhases(deps: {
  readonly kafka: Kafka;
  readonly config: Pick<SharedConfig, 'kafka'>;
  readonly logger: Logger;
}): RoundPhases {
  const { kafka } = deps;
  const topic = topicName(deps.config, 'rounds');
  const log = deps.logger.child({ component: 'round-phases', topic });
  const phases = new Map<GameSlug, Phase>();
  let consumer: Consumer | undefined;
  let ready = false;

  const apply = (e: RoundEvent) => {
    const next = evolvePhase(phases.get(e.game_slug), e);
    if (next) phases.set(e.game_slug, next);
  };

  /** The newest lifecycle of each game, folded oldest first from a backward scan. */
  async function bootstrap(): Promise<Map<number, bigint>> {
    const marks = new Map<number, bigint>();
    for (const [p, o] of await partitionOffsets(kafka, topic)) marks.set(p, o.high);
    const seen = new Map<GameSlug, RoundEvent[]>();
    const done = new Set<GameSlug>();
    await scanBackward(
      kafka,
      topic,
      (e) => {
        if (done.has(e.game_slug) || e.type === 'BetCashedOut') return;
        seen.set(e.game_slug, [e, ...(seen.get(e.game_slug) ?? [])]);
        if (e.type === 'RoundOpened' || e.type === 'RoundFinished') done.add(e.game_slug);
      },
      () => done.size === GAME_SLUGS.length,
      { chunk: 200, logger: log },
    );
    for (const events of seen.values()) for (const e of events) apply(e);
    return marks;
  }

  return {
    phase: (game) => phases.get(game),
    get ready() {
      return ready;
    },
    async start() {
      const marks = await bootstrap();
      const c = kafka.consumer({
        groupId: `round-phases-${randomUUID()}`,
        maxWaitTimeInMs: FETCH_MAX_WAIT_MS,
      });
      consumer = c;
      c.on(c.events.GROUP_JOIN, () => {
        for (const [partition, offset] of marks) c.seek({ topic, partition, offset: String(offset) });
      });
      c.on(c.events.FETCH, () => {
        ready = true;
      });
      c.on(c.events.CRASH, (e) => {
        ready = false;
        log.error({ err: e.payload.error?.message }, 'consumer crashed');
      });
      await c.connect();
      await c.subscribe({ topic, fromBeginning: false });
      await c.run({
        autoCommit: false,
        eachBatch: async ({ batch }) => {
          for (const m of batch.messages) {
            marks.set(batch.partition, BigInt(m.offset) + 1n);
            try {
              apply(decodeRoundEvent(m.value));
            } catch {
              // An undecodable record is the projector's to dead-letter; it changes no phase.
            }
          }
        },
      });
      log.info({ games: [...phases.keys()] }, 'following round phases');
    },
    async stop() {
      ready = false;
      await consumer?.disconnect();
      consumer = undefined;
    },
  };
}
