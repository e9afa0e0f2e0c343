/**
 * Each game's current round phase (betting, running, finished) read from the `rounds` topic, not
 * from a read model that lags ("known from the lifecycle read from the log"). The
 * API asks it whether a bet may be taken and which flight a cash-out belongs to.
 *
 * Like an edge's source (lib/stream/source.ts): at start the newest lifecycle of each game is found
 * by reading the log tail backwards, then every partition is followed live from the high-water
 * marks captured before the scan by the topic follower (topic-follower.ts: its own consumer group
 * per process that commits nothing, and after a group rejoin each partition goes on from the next
 * record it has not folded).
 *
 * A RoundFinished the admission rule refuses (rules/rounds/admission.ts: from the future or the
 * past, a duplicate, a conflicting duplicate) changes no phase and is counted in
 * `round_phases_refused_total{reason}`: a round from the future with a higher id than the engine's
 * can no longer end the open round or hide the engine's next RoundOpened.
 */
import type { Kafka } from 'kafkajs';
import { Counter, type Registry } from 'prom-client';
import { GAME_SLUGS, type GameSlug } from '../../rules/games/catalog.ts';
import { admitByTime, REFUSAL_REASONS, RoundLedger } from '../../rules/rounds/admission.ts';
import { evolvePhase, type Phase } from '../../rules/rounds/lifecycle.ts';
import type { RoundEvent } from '../../rules/rounds/round.ts';
import type { SharedConfig } from '../config/shared.ts';
import type { Logger } from '../logger.ts';
import { partitionOffsets } from './kafka.ts';
import { decodeRoundEvent } from './rounds-codec.ts';
import { scanBackward } from './rounds-log.ts';
import { createTopicFollower, type TopicFollower } from './topic-follower.ts';
import { topicName } from './topics.ts';

/**
 * RoundFinished records (admitted by the time rule) the start-up scan reads back per game when it
 * meets no RoundOpened: more than the odd records a producer could leave after the engine's last
 * RoundOpened, few enough to keep a lifecycle-less game's scan short.
 */
const BOOTSTRAP_FINISHED = 16;

/** Broker fetch wait, ms: every ms here is how late a closed window is seen. */
const FETCH_MAX_WAIT_MS = 20;

export interface RoundPhases {
  /** The phase of `game`'s current round, or undefined before its first round is seen. */
  phase(game: GameSlug): Phase | undefined;
  /**
   * Broker append time (Unix ms, LogAppendTime) of the BettingClosed of `game`'s round `roundId`,
   * the earliest when there are two; undefined until one is read (kept for the last 16 closes of
   * each game). What settlement compares a bet's append time with.
   */
  closedAppendedAt(game: GameSlug, roundId: number): number | undefined;
  /** True once the live consumer follows the log. */
  readonly ready: boolean;
  /** Scans the tail, then follows the log. @throws when the broker or the topic is unreachable. */
  start(): Promise<void>;
  stop(): Promise<void>;
}

/** Where the view's folds and the refusal counter live; shared by the start-up scan and the live follower. */
interface PhaseFold {
  readonly phases: Map<GameSlug, Phase>;
  /** Per game, append times of its last BettingClosed records by round id (insertion order). */
  readonly closes: Map<GameSlug, Map<number, number>>;
  /** Folds `e`, appended at `appendedAt` (Unix ms), unless the admission rule refuses it. */
  apply(e: RoundEvent, appendedAt: number): void;
}

/** Append times kept per game (its last BettingClosed records). */
const KEPT_CLOSES = 16;

/**
 * The fold of round events into phases and close times. A RoundFinished the admission rule refuses
 * changes nothing and is counted in `refused` (logged unless a duplicate).
 */
function createPhaseFold(log: Logger, refused: Counter<'reason'> | undefined): PhaseFold {
  const phases = new Map<GameSlug, Phase>();
  const closes = new Map<GameSlug, Map<number, number>>();
  const ledger = new RoundLedger();
  const keepClose = (e: RoundEvent & { type: 'BettingClosed' }, appendedAt: number) => {
    const of = closes.get(e.game_slug) ?? new Map<number, number>();
    closes.set(e.game_slug, of);
    const known = of.get(e.round_id);
    if (known === undefined || appendedAt < known) of.set(e.round_id, appendedAt);
    for (const old of of.keys()) {
      if (of.size <= KEPT_CLOSES) break;
      of.delete(old);
    }
  };
  return {
    phases,
    closes,
    apply(e, appendedAt) {
      if (e.type === 'RoundFinished') {
        const a = ledger.admit(e, appendedAt);
        if (!a.admitted) {
          refused?.inc({ reason: a.reason });
          if (a.reason !== 'duplicate')
            log.warn({ round_id: e.round_id, reason: a.reason, detail: a.detail }, 'round refused');
          return;
        }
      }
      if (e.type === 'BettingClosed') keepClose(e, appendedAt);
      const next = evolvePhase(phases.get(e.game_slug), e);
      if (next) phases.set(e.game_slug, next);
    },
  };
}

/**
 * The newest lifecycle of each game, folded oldest first from a backward scan of `topic`.
 * @returns the high-water marks captured before the scan (where the live follower starts).
 */
async function bootstrap(
  kafka: Kafka,
  topic: string,
  fold: PhaseFold,
  log: Logger,
): Promise<Map<number, bigint>> {
  const marks = new Map<number, bigint>();
  for (const [p, o] of await partitionOffsets(kafka, topic)) marks.set(p, o.high);
  const seen = new Map<GameSlug, { e: RoundEvent; at: number }[]>();
  const finished = new Map<GameSlug, number>();
  const done = new Set<GameSlug>();
  await scanBackward(
    kafka,
    topic,
    (e, r) => {
      if (done.has(e.game_slug) || e.type === 'BetCashedOut') return;
      const at = Number(r.message.timestamp);
      seen.set(e.game_slug, [{ e, at }, ...(seen.get(e.game_slug) ?? [])]);
      // The fold starts at the game's newest RoundOpened: RoundFinished records after it that are
      // not its own (another producer's, refused or not) change nothing then. A game whose rounds
      // come without a lifecycle (an older producer) stops after BOOTSTRAP_FINISHED rounds the
      // time rule admits.
      if (e.type === 'RoundOpened') done.add(e.game_slug);
      else if (e.type === 'RoundFinished' && admitByTime(e, at).admitted) {
        const n = (finished.get(e.game_slug) ?? 0) + 1;
        finished.set(e.game_slug, n);
        if (n >= BOOTSTRAP_FINISHED) done.add(e.game_slug);
      }
    },
    () => done.size === GAME_SLUGS.length,
    { chunk: 200, logger: log },
  );
  for (const events of seen.values()) for (const { e, at } of events) fold.apply(e, at);
  return marks;
}

/** Builds the view; nothing connects until `start()`. */
export function createRoundPhases(deps: {
  readonly kafka: Kafka;
  readonly config: Pick<SharedConfig, 'kafka'>;
  readonly logger: Logger;
  /** Where `round_phases_refused_total{reason}` is registered (none: not counted). */
  readonly registry?: Registry;
}): RoundPhases {
  const { kafka } = deps;
  const topic = topicName(deps.config, 'rounds');
  const log = deps.logger.child({ component: 'round-phases', topic });
  const refusedCount = deps.registry
    ? new Counter({
        name: 'round_phases_refused_total',
        help: 'RoundFinished records of rounds the lifecycle view refused (rules/rounds/admission.ts), by reason',
        labelNames: ['reason'],
        registers: [deps.registry],
      })
    : undefined;
  for (const reason of REFUSAL_REASONS) refusedCount?.inc({ reason }, 0);
  const fold = createPhaseFold(log, refusedCount);
  let follower: TopicFollower | undefined;

  return {
    phase: (game) => fold.phases.get(game),
    closedAppendedAt: (game, roundId) => fold.closes.get(game)?.get(roundId),
    get ready() {
      return follower?.ready ?? false;
    },
    async start() {
      const marks = await bootstrap(kafka, topic, fold, log);
      const f = createTopicFollower({
        kafka,
        topic,
        groupPrefix: 'round-phases',
        from: marks,
        maxWaitTimeInMs: FETCH_MAX_WAIT_MS,
        logger: log,
        onRecords: ({ records }) => {
          for (const m of records) {
            try {
              fold.apply(decodeRoundEvent(m.value), Number(m.timestamp));
            } catch {
              // An undecodable record is the projector's to dead-letter; it changes no phase.
            }
          }
        },
      });
      follower = f;
      await f.start();
      log.info({ games: [...fold.phases.keys()] }, 'following round phases');
    },
    async stop() {
      await follower?.stop();
      follower = undefined;
    },
  };
}
