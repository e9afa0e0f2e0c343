/**
 * The opt-in lifecycle messages of the streams: a round's betting window opened
 * (`round-opened`) and closed (`betting-closed`), read from the `rounds` topic by the edge's source
 * (RoundOpened, BettingClosed; cash-out decisions are never streamed). Subscribers that did not ask
 * never see them.
 *
 * JSON form (decided here; docs/decisions/streams-and-resume/0007-lifecycle-messages.md), times as ISO 8601 in UTC like
 * the stream form's `finished_at`, plus `timestamp`, the append time in Unix ms, as on rounds:
 *
 *   {"event":"round-opened","game_slug","game_id","round_id","betting_opens_at","betting_closes_at",
 *    "commitment","chain_epoch","chain_index","speed","timestamp"}
 *   {"event":"betting-closed","game_slug","game_id","round_id","at","timestamp"}
 *
 * `commitment` is the terminal hash of the round's chain, `chain_index` its place in it (the proof
 * of RoundFinished then checks against both); `speed` is ROUND_SPEED, so a client draws a crash
 * flight from `at` with m(t) = e^(0.00006 · speed · ms).
 */
import type { GameSlug } from '../../rules/games/catalog.ts';
import type { RoundLifecycle } from '../../rules/rounds/round.ts';

export interface RoundOpenedMessage {
  readonly event: 'round-opened';
  readonly game_slug: string;
  readonly game_id: number;
  readonly round_id: number;
  readonly betting_opens_at: string;
  readonly betting_closes_at: string;
  readonly commitment: string;
  readonly chain_epoch: number;
  readonly chain_index: number;
  readonly speed: number;
  readonly timestamp: number;
}

export interface BettingClosedMessage {
  readonly event: 'betting-closed';
  readonly game_slug: string;
  readonly game_id: number;
  readonly round_id: number;
  readonly at: string;
  readonly timestamp: number;
}

export type LifecycleMessage = RoundOpenedMessage | BettingClosedMessage;

/** The message form of a lifecycle event appended at `appendedAt` (Unix ms). */
export function toLifecycleMessage(e: RoundLifecycle, appendedAt: number): LifecycleMessage {
  if (e.type === 'RoundOpened')
    return {
      event: 'round-opened',
      game_slug: e.game_slug,
      game_id: e.game_id,
      round_id: e.round_id,
      betting_opens_at: new Date(e.betting_opens_at).toISOString(),
      betting_closes_at: new Date(e.betting_closes_at).toISOString(),
      commitment: e.commitment,
      chain_epoch: e.chain_epoch,
      chain_index: e.chain_index,
      speed: e.speed,
      timestamp: appendedAt,
    };
  return {
    event: 'betting-closed',
    game_slug: e.game_slug,
    game_id: e.game_id,
    round_id: e.round_id,
    at: new Date(e.at).toISOString(),
    timestamp: appendedAt,
  };
}

/** One lifecycle event on its way to subscribers; its JSON is built once however many receive it. */
export class LifecycleUpdate {
  readonly message: LifecycleMessage;
  private text: string | undefined;

  constructor(
    readonly event: RoundLifecycle,
    /** Log append time, Unix ms. */
    readonly appendedAt: number,
  ) {
    this.message = toLifecycleMessage(event, appendedAt);
  }

  get slug(): GameSlug {
    return this.event.game_slug;
  }

  /** The message's JSON text. */
  json(): string {
    this.text ??= JSON.stringify(this.message);
    return this.text;
  }
}
