/**
 * Which RoundFinished records of the `rounds` topic a reader uses: one rule for every reader (the
 * projector, the edges, settlement, the lifecycle phases), so whatever already sits on the topic (an
 * older producer's record, a bad one) is refused the same way everywhere and never makes a reader
 * freeze or skip the rounds after it (docs/decisions/log-and-topics/0009-admission-of-a-rounds-record.md).
 *
 * Time: a round's `finished_at` is compared with its record's log append time (the topic uses
 * LogAppendTime, so every reader sees the same value), never with a clock. A round finishes before
 * it is appended, so `finished_at` more than {@link FUTURE_SKEW_MS} after the append time is
 * `future`; more than {@link PAST_LIMIT_MS} before it is `past`.
 *
 * Identity (RoundLedger): the same round id again with the same content is a `duplicate` (ignored:
 * a producer's retry); with other content a `conflict` (refused: the first one read wins). A round
 * id below one already admitted is NOT refused for being lower: ids are deduplicated, not compared
 * with a high-water mark.
 *
 * Pure: no I/O, no clock.
 */
import type { GameSlug } from '../games/catalog.ts';
import type { RoundFinished } from './round.ts';

/**
 * Largest lead of `finished_at` over the record's append time, ms, still admitted: the clock
 * difference tolerated between the host that finished the round and the broker (NTP keeps hosts
 * within milliseconds; 5 s is generous while a round "from the future" by minutes is refused).
 */
export const FUTURE_SKEW_MS = 5_000;

/**
 * Largest lag of `finished_at` behind the record's append time, ms, still admitted: 10 years
 * (3,652 days). The round engine re-sends a round through a broker outage for as long as it lasts,
 * and a history imported from an older producer keeps its rounds' own times, so only times no round
 * of this platform can have are refused (year 0, the Unix epoch, a zero or sentinel value).
 */
export const PAST_LIMIT_MS = 3_652 * 86_400_000;

/** Why a record was refused: the label of the readers' metrics and the projector's dead-letter reason. */
export type RefusalReason = 'future' | 'past' | 'duplicate' | 'conflict';

/** Every refusal reason, for metric series created at 0. */
export const REFUSAL_REASONS: readonly RefusalReason[] = ['future', 'past', 'duplicate', 'conflict'];

/** Outcome of admitting a record. */
export type Admission =
  | { readonly admitted: true }
  | { readonly admitted: false; readonly reason: RefusalReason; readonly detail: string };

const ADMITTED: Admission = { admitted: true };

/**
 * The time rule alone (stateless, so a reader starting anywhere in the log decides like every other).
 * @param round the decoded round (`finished_at` Unix ms).
 * @param appendedAt the record's log append time, Unix ms.
 * @returns `admitted`, or refused as `future` / `past` with a detail naming both times.
 */
export function admitByTime(round: Pick<RoundFinished, 'finished_at'>, appendedAt: number): Admission {
  const lead = round.finished_at - appendedAt;
  if (!Number.isFinite(lead)) return refused('past', round.finished_at, appendedAt);
  if (lead > FUTURE_SKEW_MS) return refused('future', round.finished_at, appendedAt);
  if (-lead > PAST_LIMIT_MS) return refused('past', round.finished_at, appendedAt);
  return ADMITTED;
}

function refused(reason: 'future' | 'past', finishedAt: number, appendedAt: number): Admission {
  const iso = (ms: number) =>
    Number.isFinite(ms) && Math.abs(ms) <= 8.64e15 ? new Date(ms).toISOString() : String(ms);
  return {
    admitted: false,
    reason,
    detail: `finished_at ${iso(finishedAt)} is ${reason === 'future' ? 'after' : 'before'} its append time ${iso(appendedAt)} by more than ${reason === 'future' ? `${FUTURE_SKEW_MS} ms` : `${PAST_LIMIT_MS / 86_400_000} days`}`,
  };
}

/** The content of a round that makes two records of one id the same round (its JSON, fields in a fixed order). */
export function roundContent(r: RoundFinished): string {
  return JSON.stringify([r.round_id, r.game_id, r.game_slug, r.game_type, r.finished_at, r.result, r.proof]);
}

/** Round ids a ledger remembers per game by default: far more than a reader meets out of order. */
export const LEDGER_CAPACITY = 4_096;

/**
 * The rule with identity: remembers the content of the last `capacity` admitted round ids of each
 * game (the oldest admitted is forgotten first), so a duplicate and a conflict are told apart.
 * One per reader, fed in log order.
 */
export class RoundLedger {
  readonly #capacity: number;
  readonly #games = new Map<GameSlug, Map<number, string>>();

  /** @param capacity round ids remembered per game (at least 1). */
  constructor(capacity = LEDGER_CAPACITY) {
    this.#capacity = Math.max(1, Math.floor(capacity));
  }

  /**
   * Admits `round`, read at append time `appendedAt` (Unix ms), and remembers it when admitted.
   * @returns `admitted`, or refused as `future`, `past`, `duplicate` (same id, same content) or
   *   `conflict` (same id, other content: the one admitted first stays).
   */
  admit(round: RoundFinished, appendedAt: number): Admission {
    const byTime = admitByTime(round, appendedAt);
    if (!byTime.admitted) return byTime;
    let seen = this.#games.get(round.game_slug);
    if (!seen) {
      seen = new Map();
      this.#games.set(round.game_slug, seen);
    }
    const content = roundContent(round);
    const prior = seen.get(round.round_id);
    if (prior !== undefined)
      return prior === content
        ? { admitted: false, reason: 'duplicate', detail: `round ${round.round_id} read again` }
        : {
            admitted: false,
            reason: 'conflict',
            detail: `round ${round.round_id} read before with other content; the first one stays`,
          };
    seen.set(round.round_id, content);
    if (seen.size > this.#capacity) {
      const oldest = seen.keys().next();
      if (!oldest.done) seen.delete(oldest.value);
    }
    return ADMITTED;
  }

  /** Remembers `round` as admitted without checking it (a round a reader took from elsewhere). */
  remember(round: RoundFinished): void {
    let seen = this.#games.get(round.game_slug);
    if (!seen) {
      seen = new Map();
      this.#games.set(round.game_slug, seen);
    }
    if (!seen.has(round.round_id)) seen.set(round.round_id, roundContent(round));
    if (seen.size > this.#capacity) {
      const oldest = seen.keys().next();
      if (!oldest.done) seen.delete(oldest.value);
    }
  }

  /** Whether round `roundId` of `game` has been admitted (and is still remembered). */
  has(game: GameSlug, roundId: number): boolean {
    return this.#games.get(game)?.has(roundId) ?? false;
  }
}
