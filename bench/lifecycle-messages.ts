/**
 * What the watchers of bench/lifecycle.ts receive, read and summed up (pure; unit-tested): a
 * WebSocket frame is a finished round in the stream form (plain subscription), or an envelope
 * (`envelope=1&lifecycle=1`) carrying a round, a lifecycle message (`round-opened`,
 * `betting-closed`), a heartbeat or something else. Each message has two times to measure the
 * delay of its receipt from: `timestamp`, the record's append time on `rounds` (LogAppendTime, Unix
 * ms), and the event's own time, the engine's clock when it happened (`betting_opens_at` of
 * round-opened, `at` of betting-closed = the flight's start, `finished_at` of a round = the bust).
 */
import { latencySummary } from './lib.ts';

/** The kinds of message measured, in the order of a round's life. */
export const KINDS = ['round-opened', 'betting-closed', 'round'] as const;
export type Kind = (typeof KINDS)[number];

/** One measured message as read from a frame. */
export interface Watched {
  readonly kind: Kind;
  readonly roundId: number;
  /** The record's append time on `rounds`, Unix ms. */
  readonly appendedAt: number;
  /** The event's own time (engine clock), Unix ms. */
  readonly eventAt: number;
}

type Json = Record<string, unknown>;

const roundOf = (d: Json): Watched => ({
  kind: 'round',
  roundId: Number(d.round_id),
  appendedAt: Number(d.timestamp),
  eventAt: Date.parse(String(d.finished_at)),
});

/**
 * Reads one frame's text.
 * @returns the measured message, or `heartbeat` / `other` (recovered, error… envelopes) for what is
 *   only counted.
 * @throws SyntaxError when the text is not JSON.
 */
export function readFrame(text: string): Watched | 'heartbeat' | 'other' {
  const m = JSON.parse(text) as Json;
  if (typeof m.type !== 'string') return 'finished_at' in m ? roundOf(m) : 'other';
  const d = (m.data ?? {}) as Json;
  if (m.type === 'round') return roundOf(d);
  if (m.type === 'heartbeat') return 'heartbeat';
  if (m.type !== 'lifecycle') return 'other';
  const base = { roundId: Number(d.round_id), appendedAt: Number(d.timestamp) };
  if (d.event === 'round-opened')
    return { kind: 'round-opened', ...base, eventAt: Date.parse(String(d.betting_opens_at)) };
  if (d.event === 'betting-closed')
    return { kind: 'betting-closed', ...base, eventAt: Date.parse(String(d.at)) };
  return 'other';
}

/** Every measured delivery of a group of watchers, column-wise (kind as its index in KINDS). */
export interface Deliveries {
  readonly kind: Uint8Array;
  readonly roundId: Float64Array;
  readonly appendedAt: Float64Array;
  readonly eventAt: Float64Array;
  /** Wall-clock receive time, ms. */
  readonly receivedAt: Float64Array;
}

/** Figures of one kind of message over a window. */
export interface KindFigures {
  readonly kind: Kind;
  /** Records of this kind in the window: as counted on the log when given, else as delivered. */
  readonly messages: number;
  readonly deliveries: number;
  /** Deliveries missing: messages × watchers − deliveries. */
  readonly missing: number;
  /** Receipt − append time (LogAppendTime), ms. */
  readonly fromAppend: ReturnType<typeof latencySummary>;
  /** Receipt − the event's own time (engine clock), ms. */
  readonly fromEvent: ReturnType<typeof latencySummary>;
  /** Per message, its last watcher's receipt − its first's (the fan-out's spread), ms. */
  readonly spread: ReturnType<typeof latencySummary>;
}

/**
 * Per kind of message: counts, delays from the append and from the event, and fan-out spread.
 * `logged` is how many records of each kind the log holds in the window (the expected messages).
 */
export function summarize(
  d: Deliveries,
  watchers: number,
  logged: Readonly<Partial<Record<Kind, number>>> = {},
): KindFigures[] {
  return KINDS.map((kind, k) => {
    const fromAppend: number[] = [];
    const fromEvent: number[] = [];
    const perMessage = new Map<string, { n: number; first: number; last: number }>();
    for (let i = 0; i < d.kind.length; i++) {
      if (d.kind[i] !== k) continue;
      const at = d.receivedAt[i] as number;
      fromAppend.push(at - (d.appendedAt[i] as number));
      fromEvent.push(at - (d.eventAt[i] as number));
      const key = `${d.roundId[i]}@${d.appendedAt[i]}`;
      const m = perMessage.get(key);
      if (!m) perMessage.set(key, { n: 1, first: at, last: at });
      else {
        m.n++;
        m.first = Math.min(m.first, at);
        m.last = Math.max(m.last, at);
      }
    }
    const messages = [...perMessage.values()];
    const expected = logged[kind] ?? messages.length;
    return {
      kind,
      messages: expected,
      deliveries: fromAppend.length,
      missing: expected * watchers - fromAppend.length,
      fromAppend: latencySummary(fromAppend),
      fromEvent: latencySummary(fromEvent),
      spread: latencySummary(messages.map((m) => m.last - m.first)),
    };
  });
}

/** The deliveries of several client processes as one, keeping only messages appended in [from, to). */
export function mergeDeliveries(parts: readonly Deliveries[], from: number, to: number): Deliveries {
  const keep: [Deliveries, number][] = [];
  for (const d of parts)
    for (let i = 0; i < d.kind.length; i++) {
      const at = d.appendedAt[i] as number;
      if (at >= from && at < to) keep.push([d, i]);
    }
  const column = <A extends Float64Array | Uint8Array>(
    make: (n: number) => A,
    pick: (d: Deliveries) => A,
  ) => {
    const out = make(keep.length);
    keep.forEach(([d, i], k) => {
      out[k] = pick(d)[i] as number;
    });
    return out;
  };
  const f64 = (n: number) => new Float64Array(n);
  return {
    kind: column(
      (n) => new Uint8Array(n),
      (d) => d.kind,
    ),
    roundId: column(f64, (d) => d.roundId),
    appendedAt: column(f64, (d) => d.appendedAt),
    eventAt: column(f64, (d) => d.eventAt),
    receivedAt: column(f64, (d) => d.receivedAt),
  };
}
