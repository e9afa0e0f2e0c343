/**
 * Reading the `rounds` topic from its end backwards: how the engine recovers each game's
 * position at start (the log is the source of truth, docs/decisions/log-and-topics/0001-log-is-the-source-of-truth.md) and after a failed
 * send, and how the verify CLI finds a round by id.
 */
import type { Kafka } from 'kafkajs';
import { type ScanOptions, scanBackward } from '../../lib/log/rounds-log.ts';
import type { GameSlug } from '../../rules/games/catalog.ts';
import { evolve, type GameState, initialState } from '../../rules/rounds/decider.ts';
import type { BettingClosed, RoundEvent, RoundFinished, RoundOpened } from '../../rules/rounds/round.ts';
import { RoundNotFoundError, RoundOpenError } from './errors.ts';

/**
 * Each game's state from the log tail: the newest round (by round id) of each game, and for the
 * chain position the newest one carrying a proof. Games with no rounds get the initial state.
 */
export async function recoverStates(
  kafka: Kafka,
  topic: string,
  games: readonly GameSlug[],
  options: ScanOptions = {},
): Promise<Map<GameSlug, GameState>> {
  const wanted = new Set<string>(games);
  const last = new Map<GameSlug, RoundFinished>();
  const lastProved = new Map<GameSlug, RoundFinished>();
  const newer = (a: RoundFinished | undefined, b: RoundFinished) => !a || b.round_id > a.round_id;
  await scanBackward(
    kafka,
    topic,
    (round) => {
      if (round.type !== 'RoundFinished' || !wanted.has(round.game_slug)) return;
      if (newer(last.get(round.game_slug), round)) last.set(round.game_slug, round);
      if (round.proof && newer(lastProved.get(round.game_slug), round))
        lastProved.set(round.game_slug, round);
    },
    () => games.every((g) => lastProved.has(g)),
    options,
  );
  const states = new Map<GameSlug, GameState>();
  for (const g of games) {
    let s = initialState(g);
    const proved = lastProved.get(g);
    if (proved) s = evolve(s, proved);
    const newest = last.get(g);
    if (newest && newest !== proved) s = evolve(s, newest);
    states.set(g, s);
  }
  return states;
}

/**
 * The round `roundId` of `game` and, when it is in the log, the round just before it
 * (`roundId - 1`), for the chain link check.
 * @throws RoundOpenError when the round is opened in the topic but not finished yet;
 *   RoundNotFoundError when it is not in the topic at all.
 */
export async function findRound(
  kafka: Kafka,
  topic: string,
  game: GameSlug,
  roundId: number,
  options: ScanOptions = {},
): Promise<{ round: RoundFinished; previous: RoundFinished | null }> {
  let round: RoundFinished | undefined;
  let previous: RoundFinished | undefined;
  let opened: RoundOpened | undefined;
  let passed = false;
  await scanBackward(
    kafka,
    topic,
    (r) => {
      if (r.type === 'RoundOpened' && r.game_slug === game && r.round_id === roundId) opened = r;
      if (r.type !== 'RoundFinished' || r.game_slug !== game) return;
      if (r.round_id === roundId) round = r;
      else if (r.round_id === roundId - 1) previous = r;
      else if (r.round_id < roundId - 1) passed = true;
    },
    // Older rounds of the game come after both, so once one is seen neither can still appear.
    () => passed || (round !== undefined && previous !== undefined),
    options,
  );
  if (!round && opened)
    throw new RoundOpenError(
      `round ${roundId} of ${game} is open: it has not finished, so nothing is revealed yet`,
      opened,
    );
  if (!round) throw new RoundNotFoundError(`round ${roundId} of ${game} is not in ${topic}`);
  return { round, previous: previous ?? null };
}

/** A round whose RoundOpened is in the log and whose RoundFinished is not: the engine resumes it. */
export interface OpenRound {
  readonly opened: RoundOpened;
  /** BettingClosed.at when it is in the log. */
  readonly closedAt: number | null;
}

/**
 * For each game, the round opened after its newest RoundFinished and not finished (an engine that
 * stopped mid-round), if any: what was appended of its lifecycle, read from the log tail.
 */
export async function recoverOpenRounds(
  kafka: Kafka,
  topic: string,
  games: readonly GameSlug[],
  options: ScanOptions = {},
): Promise<Map<GameSlug, OpenRound>> {
  const done = new Set<GameSlug>();
  const opened = new Map<GameSlug, RoundOpened>();
  const closed = new Map<GameSlug, BettingClosed>();
  const wanted = new Set<string>(games);
  await scanBackward(
    kafka,
    topic,
    (e) => {
      const g = e.game_slug;
      if (!wanted.has(g) || done.has(g)) return;
      if (e.type === 'RoundFinished') done.add(g);
      else if (e.type === 'RoundOpened' && !opened.has(g)) opened.set(g, e);
      else if (e.type === 'BettingClosed' && !closed.has(g)) closed.set(g, e);
    },
    () => games.every((g) => done.has(g)),
    options,
  );
  const open = new Map<GameSlug, OpenRound>();
  for (const [g, o] of opened) {
    const c = closed.get(g);
    open.set(g, { opened: o, closedAt: c && c.round_id === o.round_id ? c.at : null });
  }
  return open;
}

/** Order of a round's events in the log: a later kind of the same round implies the earlier ones landed. */
const RANK: Readonly<Record<RoundEvent['type'], number>> = {
  RoundOpened: 0,
  BettingClosed: 1,
  BetCashedOut: 2,
  RoundFinished: 3,
};

/**
 * Whether `event` is in the log: the same event, or an event of the same game that the engine only
 * appends after it (a later kind of the same round, or a later round). Reads the game's partition
 * from the end until a record of an older round.
 */
export async function eventLanded(
  kafka: Kafka,
  topic: string,
  event: RoundEvent,
  options: ScanOptions = {},
): Promise<boolean> {
  let landed = false;
  let passed = false;
  await scanBackward(
    kafka,
    topic,
    (e) => {
      if (landed || e.game_slug !== event.game_slug) return;
      if (e.round_id < event.round_id) passed = true;
      else if (e.round_id > event.round_id) landed = true;
      else if (event.type === 'BetCashedOut' && e.type === 'BetCashedOut') landed ||= e.tx_id === event.tx_id;
      else if (RANK[e.type] > RANK[event.type] || e.type === event.type) landed = true;
    },
    () => landed || passed,
    options,
  );
  return landed;
}
