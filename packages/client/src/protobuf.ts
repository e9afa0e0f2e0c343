/**
 * The little protobuf the gRPC transport needs (proto/datastream.proto of the platform): encoding
 * StreamRoundEventsRequest and decoding RoundEvent, by hand, so the client has no runtime
 * dependency. Wire format: https://protobuf.dev/programming-guides/encoding/ (varints, length-
 * delimited fields, fixed64 doubles). Unknown fields are skipped, as protobuf requires.
 */
import type { Envelope, LifecycleMessage, RecoveredInfo, StreamRound } from './types.ts';

const utf8 = new TextEncoder();
const text = new TextDecoder();

function varint(n: number): number[] {
  const out: number[] = [];
  let v = n;
  while (v >= 0x80) {
    out.push((v % 0x80) | 0x80);
    v = Math.floor(v / 0x80);
  }
  out.push(v);
  return out;
}

function field(no: number, wire: number): number[] {
  return varint(no * 8 + wire);
}

/** The request of StreamRoundEvents: one of game_slug/game_type/all, since, latest, lifecycle. */
export function encodeEventsRequest(r: {
  game_slug?: string;
  game_type?: string;
  all?: boolean;
  since?: string;
  latest?: boolean;
  lifecycle?: boolean;
}): Uint8Array {
  const out: number[] = [];
  const str = (no: number, s: string | undefined) => {
    if (s === undefined) return;
    const b = utf8.encode(s);
    out.push(...field(no, 2), ...varint(b.length), ...b);
  };
  const bool = (no: number, b: boolean | undefined) => {
    if (b) out.push(...field(no, 0), 1);
  };
  str(1, r.game_slug);
  str(2, r.game_type);
  bool(3, r.all);
  str(4, r.since || undefined);
  bool(5, r.latest);
  bool(6, r.lifecycle);
  return Uint8Array.from(out);
}

type Fields = Map<number, (number | Uint8Array)[]>;

/** Field number → values (varints and fixed64 as numbers, length-delimited as bytes). */
function fields(b: Uint8Array): Fields {
  const out: Fields = new Map();
  let i = 0;
  const readVarint = () => {
    let v = 0;
    let mul = 1;
    for (;;) {
      const byte = b[i++] as number;
      v += (byte & 0x7f) * mul;
      if (byte < 0x80) return v;
      mul *= 0x80;
    }
  };
  while (i < b.length) {
    const key = readVarint();
    const no = Math.floor(key / 8);
    const wire = key % 8;
    let value: number | Uint8Array;
    if (wire === 0) value = readVarint();
    else if (wire === 1) {
      value = new DataView(b.buffer, b.byteOffset + i, 8).getFloat64(0, true);
      i += 8;
    } else if (wire === 2) {
      const len = readVarint();
      value = b.subarray(i, i + len);
      i += len;
    } else if (wire === 5) {
      value = new DataView(b.buffer, b.byteOffset + i, 4).getUint32(0, true);
      i += 4;
    } else throw new Error(`unsupported wire type ${wire}`);
    const list = out.get(no) ?? [];
    list.push(value);
    out.set(no, list);
  }
  return out;
}

const num = (f: Fields, no: number): number => Number(f.get(no)?.at(-1) ?? 0);
const str = (f: Fields, no: number): string => {
  const v = f.get(no)?.at(-1);
  return v instanceof Uint8Array ? text.decode(v) : '';
};
const msg = (f: Fields, no: number): Fields | undefined => {
  const v = f.get(no)?.at(-1);
  return v instanceof Uint8Array ? fields(v) : undefined;
};

function round(f: Fields): StreamRound {
  return {
    round_id: num(f, 1),
    game_id: num(f, 2),
    game_slug: str(f, 3),
    game_type: str(f, 4),
    finished_at: str(f, 5),
    extras: str(f, 6),
    timestamp: num(f, 7),
  };
}

function lifecycle(f: Fields): LifecycleMessage {
  const common = { game_slug: str(f, 2), game_id: num(f, 3), round_id: num(f, 4) };
  if (str(f, 1) === 'betting-closed')
    return { event: 'betting-closed', ...common, at: str(f, 11), timestamp: num(f, 12) };
  return {
    event: 'round-opened',
    ...common,
    betting_opens_at: str(f, 5),
    betting_closes_at: str(f, 6),
    commitment: str(f, 7),
    chain_epoch: num(f, 8),
    chain_index: num(f, 9),
    speed: num(f, 10),
    timestamp: num(f, 12),
  };
}

function recovered(f: Fields): RecoveredInfo {
  const reason = str(f, 4);
  return {
    recovered: num(f, 1) === 1,
    since: str(f, 2) || null,
    replayed: num(f, 3),
    ...(reason ? { reason } : {}),
  };
}

/** A RoundEvent as the envelope it stands for (`sub` is the call's subscription). */
export function decodeEvent(b: Uint8Array, sub: string): Envelope | undefined {
  const f = fields(b);
  const type = str(f, 1);
  const position = str(f, 2);
  const r = msg(f, 3);
  if (type === 'round' && r) {
    return {
      type,
      sub,
      position,
      data: round(r),
      ...(num(f, 6) === 1 ? { initial: true } : {}),
      ...(num(f, 7) === 1 ? { replay: true } : {}),
      ...(f.has(8) ? { prev: num(f, 8) } : {}),
    };
  }
  const rec = msg(f, 4);
  if (type === 'recovered' && rec) return { type, sub, position, data: recovered(rec) };
  const l = msg(f, 5);
  if (type === 'lifecycle' && l) return { type, sub, position, data: lifecycle(l) };
  if (type === 'heartbeat') return { type, sub, position, data: {} };
  return undefined;
}
