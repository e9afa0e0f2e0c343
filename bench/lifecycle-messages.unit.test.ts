/**
 * The watchers' reading of frames (plain rounds, envelopes of rounds, lifecycle messages,
 * heartbeats) and the per-kind figures of bench/lifecycle.ts, on frames in the edge's own forms
 * (lib/stream/envelope.ts, lib/stream/lifecycle.ts, the stream form).
 */
import { describe, expect, it } from 'vitest';
import { heartbeatEnvelope, lifecycleEnvelope, roundEnvelope } from '../lib/stream/envelope.ts';
import { LifecycleUpdate } from '../lib/stream/lifecycle.ts';
import type { BettingClosed, RoundOpened } from '../rules/rounds/round.ts';
import { type Deliveries, KINDS, mergeDeliveries, readFrame, summarize } from './lifecycle-messages.ts';

const opened: RoundOpened = {
  type: 'RoundOpened',
  round_id: 1_000_000_007,
  game_id: 1,
  game_slug: 'crash',
  game_type: 'multiplier',
  betting_opens_at: 1_700_000_000_000,
  betting_closes_at: 1_700_000_007_000,
  chain_epoch: 0,
  chain_index: 7,
  commitment: 'a'.repeat(64),
  speed: 1,
};
const closed: BettingClosed = {
  type: 'BettingClosed',
  round_id: opened.round_id,
  game_id: 1,
  game_slug: 'crash',
  at: 1_700_000_007_001,
};
const round = JSON.stringify({
  round_id: opened.round_id,
  game_id: 1,
  game_slug: 'crash',
  game_type: 'multiplier',
  finished_at: '2023-11-14T22:13:40.500Z',
  extras: '{"point":"1.50"}',
  timestamp: 1_700_000_020_502,
});

describe('readFrame', () => {
  it('reads a plain round and an enveloped one alike', () => {
    const want = {
      kind: 'round',
      roundId: opened.round_id,
      appendedAt: 1_700_000_020_502,
      eventAt: 1_700_000_020_500,
    };
    expect(readFrame(round)).toEqual(want);
    expect(readFrame(roundEnvelope('game:crash', 't=1', round, { prev: null }))).toEqual(want);
  });

  it('reads lifecycle messages with their append time and event time', () => {
    const o = new LifecycleUpdate(opened, 1_700_000_000_003);
    expect(readFrame(lifecycleEnvelope('game:crash', 't=1', o.json()))).toEqual({
      kind: 'round-opened',
      roundId: opened.round_id,
      appendedAt: 1_700_000_000_003,
      eventAt: opened.betting_opens_at,
    });
    const c = new LifecycleUpdate(closed, 1_700_000_007_004);
    expect(readFrame(lifecycleEnvelope('game:crash', 't=1', c.json()))).toMatchObject({
      kind: 'betting-closed',
      eventAt: closed.at,
    });
  });

  it('only counts heartbeats and other envelopes, and throws on what is not JSON', () => {
    expect(readFrame(heartbeatEnvelope('game:crash', 't=1'))).toBe('heartbeat');
    expect(readFrame('{"type":"recovered","sub":"game:crash","position":null,"data":{}}')).toBe('other');
    expect(() => readFrame('not json')).toThrow(SyntaxError);
  });
});

/** Deliveries of rows [kind, roundId, appendedAt, eventAt, receivedAt]. */
const deliveries = (rows: [number, number, number, number, number][]): Deliveries => ({
  kind: Uint8Array.from(rows.map((r) => r[0])),
  roundId: Float64Array.from(rows.map((r) => r[1])),
  appendedAt: Float64Array.from(rows.map((r) => r[2])),
  eventAt: Float64Array.from(rows.map((r) => r[3])),
  receivedAt: Float64Array.from(rows.map((r) => r[4])),
});

describe('summarize and mergeDeliveries', () => {
  it('gives delays from the append and the event, the spread, and what is missing', () => {
    const closedK = KINDS.indexOf('betting-closed');
    const roundK = KINDS.indexOf('round');
    // Two watchers; round 1's close reached both, round 2's close one, round 1's end both.
    const d = deliveries([
      [closedK, 1, 100, 98, 103],
      [closedK, 1, 100, 98, 105],
      [closedK, 2, 200, 199, 210],
      [roundK, 1, 150, 149, 151],
      [roundK, 1, 150, 149, 152],
    ]);
    const [o, c, r] = summarize(d, 2, { 'betting-closed': 2, round: 1 });
    expect(o).toMatchObject({ kind: 'round-opened', messages: 0, deliveries: 0, missing: 0 });
    expect(c).toMatchObject({ kind: 'betting-closed', messages: 2, deliveries: 3, missing: 1 });
    // p50 is the top of its HdrHistogram bucket (bench/lib.ts); max is exact.
    expect(c?.fromAppend.p50).toBeCloseTo(5, 1);
    expect(c?.fromAppend.max).toBe(10);
    expect(c?.fromEvent.max).toBe(11);
    expect(c?.spread).toMatchObject({ n: 2, max: 2 });
    expect(r).toMatchObject({ deliveries: 2, missing: 0 });
    expect(r?.fromAppend.max).toBe(2);
  });

  it('merges client processes and keeps only what was appended in the window', () => {
    const a = deliveries([
      [0, 1, 99, 98, 101],
      [0, 1, 100, 98, 102],
    ]);
    const b = deliveries([
      [2, 1, 150, 149, 152],
      [2, 2, 250, 249, 251],
    ]);
    const m = mergeDeliveries([a, b], 100, 250);
    expect([...m.appendedAt]).toEqual([100, 150]);
    expect([...m.kind]).toEqual([0, 2]);
    expect([...m.receivedAt]).toEqual([102, 152]);
  });
});
