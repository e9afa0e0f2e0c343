/**
 * The opt-in envelope of the streams: clients that ask (`envelope=1` on WebSocket
 * and WebTransport; gRPC's StreamRoundEvents carries the same fields as a message) get every message
 * as one JSON object
 *
 *   {"type": "round" | "recovered" | "lifecycle" | "heartbeat" | "error" | "unsubscribed",
 *    "sub": "<subscription>", "position": "<position>" | null, "data": …}
 *
 * - `sub` names the subscription on a connection that holds several: `game:<slug>`, `type:<type>`
 *   or `all` (one subscription per selection and connection).
 * - `position` (lib/stream/position.ts) is where to resume this subscription after the message.
 * - `round`: `data` is the seed's stream form, field for field. `initial: true` marks the latest
 *   round sent on subscribe (opt-in `latest`), `replay: true` one of a catch-up; a live round has
 *   `prev`, the previous round id of its game in the log (null when the edge knows none), so a
 *   client on an unreliable transport (WebTransport datagrams) sees a lost round.
 * - `recovered`: once per subscription, after its catch-up and before its live rounds:
 *   `data: {recovered, since, replayed, reason?}`; `recovered` is true only when a position was
 *   given and every round after it was delivered.
 * - `lifecycle`: `data` is the lifecycle message (lib/stream/lifecycle.ts), opt-in `lifecycle`.
 * - `heartbeat`: `data: {}`, the current position of the subscription, every heartbeat period.
 * - `error`: `data: {status, error, op?}`, an HTTP-like status (400, 403, 404, 409, 429) and text;
 *   `sub` is the subscription concerned or null.
 */

/** What a subscriber learns once its catch-up is over. */
export interface RecoveredInfo {
  /** True when a position was given and every round after it has been delivered. */
  readonly recovered: boolean;
  /** The position the subscriber asked to resume from, or null for a fresh subscription. */
  readonly since: string | null;
  /** Rounds replayed before going live. */
  readonly replayed: number;
  /** Why the resume was not complete (absent when it was, or none was asked). */
  readonly reason?: string;
}

/** Marks on a round envelope. */
export interface RoundMarks {
  readonly initial?: boolean;
  readonly replay?: boolean;
  /** Previous round id of the game in the log (live rounds only); null when unknown. */
  readonly prev?: number | null;
}

const q = JSON.stringify;

/** A `round` envelope; `data` is the stream form's JSON text (already serialised, shared). */
export function roundEnvelope(sub: string, position: string, data: string, marks: RoundMarks = {}): string {
  let extra = '';
  if (marks.initial) extra += ',"initial":true';
  if (marks.replay) extra += ',"replay":true';
  if (marks.prev !== undefined) extra += `,"prev":${marks.prev === null ? 'null' : marks.prev}`;
  return `{"type":"round","sub":${q(sub)},"position":${q(position)}${extra},"data":${data}}`;
}

/** A `lifecycle` envelope; `data` is the lifecycle message's JSON text. */
export function lifecycleEnvelope(sub: string, position: string, data: string): string {
  return `{"type":"lifecycle","sub":${q(sub)},"position":${q(position)},"data":${data}}`;
}

/** The `recovered` envelope of a subscription. */
export function recoveredEnvelope(sub: string, position: string, info: RecoveredInfo): string {
  return q({ type: 'recovered', sub, position, data: info });
}

/** A `heartbeat` envelope with the subscription's current position. */
export function heartbeatEnvelope(sub: string, position: string): string {
  return `{"type":"heartbeat","sub":${q(sub)},"position":${q(position)},"data":{}}`;
}

/** An `error` envelope: a refused command or a subscription ended by the server. */
export function errorEnvelope(sub: string | null, status: number, error: string, op?: string): string {
  return q({ type: 'error', sub, position: null, data: op ? { status, error, op } : { status, error } });
}

/** The `unsubscribed` envelope acknowledging an unsubscribe. */
export function unsubscribedEnvelope(sub: string, position: string): string {
  return q({ type: 'unsubscribed', sub, position, data: {} });
}
