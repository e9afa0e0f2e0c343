/**
 * The wire shapes the client reads (the platform's stream contract: the stream form of a round, the
 * envelope and lifecycle messages of the streams; docs/contract.md "Streams", /asyncapi.json).
 */

/** A finished round in the seed's stream form, identical on every protocol. */
export interface StreamRound {
  readonly round_id: number;
  readonly game_id: number;
  readonly game_slug: string;
  readonly game_type: string;
  /** ISO 8601. */
  readonly finished_at: string;
  /** JSON text of the per-game data (`JSON.parse` it). */
  readonly extras: string;
  /** Unix ms when the round was appended to the log: `Date.now() - timestamp` is the latency. */
  readonly timestamp: number;
}

/** A round's betting window opened (opt-in `lifecycle`). Times ISO 8601. */
export interface RoundOpenedMessage {
  readonly event: 'round-opened';
  readonly game_slug: string;
  readonly game_id: number;
  readonly round_id: number;
  readonly betting_opens_at: string;
  readonly betting_closes_at: string;
  /** Terminal hash of the round's provably-fair chain. */
  readonly commitment: string;
  readonly chain_epoch: number;
  readonly chain_index: number;
  /** ROUND_SPEED: a crash flight's multiplier is e^(0.00006 · speed · ms since betting closed). */
  readonly speed: number;
  readonly timestamp: number;
}

/** A round's betting window closed (opt-in `lifecycle`); a crash flight starts `at`. */
export interface BettingClosedMessage {
  readonly event: 'betting-closed';
  readonly game_slug: string;
  readonly game_id: number;
  readonly round_id: number;
  readonly at: string;
  readonly timestamp: number;
}

export type LifecycleMessage = RoundOpenedMessage | BettingClosedMessage;

/** What a subscription learns once its catch-up is over. */
export interface RecoveredInfo {
  /** True when a position was given and every round after it was delivered. */
  readonly recovered: boolean;
  /** The position asked for, or null for a fresh subscription. */
  readonly since: string | null;
  /** Rounds replayed before live ones. */
  readonly replayed: number;
  /** Why the resume was not complete. */
  readonly reason?: string;
}

/** A refusal by the server: an HTTP-like status (400, 403, 404, 409, 429, 503) and its text. */
export interface ServerError {
  readonly status: number;
  readonly error: string;
  readonly op?: string;
}

/** One message of the envelope protocol. `sub` names the subscription (`game:crash`, `type:color`, `all`). */
export type Envelope =
  | {
      readonly type: 'round';
      readonly sub: string;
      readonly position: string;
      readonly data: StreamRound;
      readonly initial?: boolean;
      readonly replay?: boolean;
      /** Live rounds: the previous round id of the game in the log (null: unknown). */
      readonly prev?: number | null;
    }
  | {
      readonly type: 'recovered';
      readonly sub: string;
      readonly position: string;
      readonly data: RecoveredInfo;
    }
  | {
      readonly type: 'lifecycle';
      readonly sub: string;
      readonly position: string;
      readonly data: LifecycleMessage;
    }
  | { readonly type: 'heartbeat'; readonly sub: string; readonly position: string; readonly data: object }
  | { readonly type: 'unsubscribed'; readonly sub: string; readonly position: string; readonly data: object }
  | {
      readonly type: 'error';
      readonly sub: string | null;
      readonly position: null;
      readonly data: ServerError;
    };

/** What to subscribe to: one game, the games of one type, or every game. */
export type Selection = { readonly game: string } | { readonly type: string } | { readonly all: true };

/** The subscription name of a selection, as the server writes it in `sub`. */
export function subscriptionName(s: Selection): string {
  if ('game' in s) return `game:${s.game}`;
  if ('type' in s) return `type:${s.type}`;
  return 'all';
}
