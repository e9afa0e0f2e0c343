import { constants as http2 } from 'node:http2';
import { type ServiceDefinition, type StatusObject, status } from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';
import { Delivery, type Selection } from '../../../../lib/stream/hub.ts';
import { syntheticRound } from '../../../../tests/support/rounds-fixture.ts';
import { parseFilter, type RoundFilter } from './filter.ts';
import { loadDataStream, SERVICE_NAME } from './proto.ts';
import { GrpcStreamSubscription, OVERFLOW_DETAILS, resetHttp2Stream, type StreamCall } from './stream.ts';

/** A grpc-js call stand-in: keeps writes and their callbacks until `flush`. */
class FakeCall implements StreamCall {
  readonly chunks: Buffer[] = [];
  readonly callbacks: (() => void)[] = [];
  readonly statuses: Partial<StatusObject>[] = [];
  write(chunk: Buffer, cb: () => void): boolean {
    this.chunks.push(chunk);
    this.callbacks.push(cb);
    return true;
  }
  emit(_event: 'error', s: Partial<StatusObject>): boolean {
    this.statuses.push(s);
    return true;
  }
  flush(): void {
    for (const cb of this.callbacks.splice(0)) cb();
  }
}

const decode = (b: Buffer) =>
  (
    (loadDataStream()[SERVICE_NAME] as ServiceDefinition).StreamAll as ServiceDefinition[string]
  ).responseDeserialize(b) as Record<string, unknown>;

const delivery = (i: number, seq: number) =>
  new Delivery(syntheticRound(i, seq, 1_700_000_000_000), 1_700_000_000_005, 0, BigInt(seq));

function make(selection: Selection, filter: RoundFilter, maxBufferBytes = 1 << 20) {
  const call = new FakeCall();
  const resets: number[] = [];
  const overflows: number[] = [];
  let delivered = 0;
  const sub = new GrpcStreamSubscription(call, {
    selection,
    filter,
    maxBufferBytes,
    onDelivered: () => delivered++,
    onOverflow: (p) => overflows.push(p),
    reset: (_c, code) => {
      resets.push(code);
      return true;
    },
  });
  return { call, sub, resets, overflows, delivered: () => delivered };
}

describe('GrpcStreamSubscription', () => {
  it('writes the stream form as protobuf, as seen by the selection', () => {
    const { call, sub, delivered } = make({ kind: 'type', type: 'multiplier' }, null);
    const d = delivery(2, 7); // a slot round
    sub.deliver(d);
    expect(call.chunks).toHaveLength(1);
    expect(decode(call.chunks[0] as Buffer)).toEqual({
      ...d.streamForm({ kind: 'type', type: 'multiplier' }),
    });
    expect(decode(call.chunks[0] as Buffer).game_type).toBe('multiplier');
    expect(delivered()).toBe(1);
  });

  it('encodes a round once for every stream of the same wire form', () => {
    const a = make({ kind: 'game', slug: 'crash' }, null);
    const b = make({ kind: 'all' }, null);
    const d = delivery(0, 1);
    a.sub.deliver(d);
    b.sub.deliver(d);
    expect(a.call.chunks[0]).toBe(b.call.chunks[0]);
  });

  it('skips rounds the filter rejects', () => {
    const sel = { kind: 'all' } as const;
    const { call, sub } = make(sel, parseFilter({ colors: ['white'] }, sel));
    for (let seq = 0; seq < 30; seq++) sub.deliver(delivery(1, seq)); // doubles; seq % 15 === 0 is white
    sub.deliver(delivery(0, 99)); // a crash round
    expect(call.chunks.map((c) => JSON.parse(decode(c).extras as string).color)).toEqual(['white', 'white']);
  });

  it('counts unflushed bytes and forgets them once flushed', () => {
    const { call, sub, overflows } = make({ kind: 'all' }, null, 4096);
    for (let seq = 0; seq < 10; seq++) sub.deliver(delivery(seq, seq));
    const expected = call.chunks.reduce((n, c) => n + c.length + 5, 0);
    expect(sub.pendingBytes).toBe(expected);
    call.flush();
    expect(sub.pendingBytes).toBe(0);
    // A reader that keeps up never reaches the limit, however many rounds pass.
    for (let seq = 10; seq < 1000; seq++) {
      sub.deliver(delivery(seq, seq));
      call.flush();
    }
    expect(overflows).toEqual([]);
    expect(sub.isClosed).toBe(false);
  });

  it('ends a stream that stops reading at the limit with ENHANCE_YOUR_CALM, once', () => {
    const limit = 2048;
    const { call, sub, resets, overflows } = make({ kind: 'all' }, null, limit);
    for (let seq = 0; seq < 500; seq++) sub.deliver(delivery(seq, seq));
    expect(resets).toEqual([http2.NGHTTP2_ENHANCE_YOUR_CALM]);
    expect(overflows).toHaveLength(1);
    expect(overflows[0]).toBeGreaterThan(limit);
    const written = call.chunks.length;
    // Stopped by the write that passed the limit, not at 500.
    const last = (call.chunks.at(-1) as Buffer).length + 5;
    expect(overflows[0] as number).toBeLessThanOrEqual(limit + last);
    expect(written).toBeLessThan(500);
    expect(sub.isClosed).toBe(true);
    sub.deliver(delivery(0, 1000));
    expect(call.chunks).toHaveLength(written);
  });

  it('falls back to a RESOURCE_EXHAUSTED status when the stream cannot be reset', () => {
    const call = new FakeCall();
    const sub = new GrpcStreamSubscription(call, {
      selection: { kind: 'all' },
      filter: null,
      maxBufferBytes: 1024,
      onDelivered: () => {},
      onOverflow: () => {},
      reset: () => false,
    });
    for (let seq = 0; seq < 100; seq++) sub.deliver(delivery(seq, seq));
    expect(call.statuses).toEqual([{ code: status.RESOURCE_EXHAUSTED, details: OVERFLOW_DETAILS }]);
  });

  it('end() sends its status once and stops delivery', () => {
    const { call, sub } = make({ kind: 'all' }, null);
    sub.end({ code: status.UNAVAILABLE, details: 'server shutting down' });
    sub.end({ code: status.UNAVAILABLE, details: 'again' });
    sub.deliver(delivery(0, 1));
    expect(call.statuses).toEqual([{ code: status.UNAVAILABLE, details: 'server shutting down' }]);
    expect(call.chunks).toHaveLength(0);
  });
});

describe('resetHttp2Stream', () => {
  it('closes the HTTP/2 stream under a grpc-js call with the code', () => {
    const codes: number[] = [];
    const call = { call: { stream: { closed: false, close: (c: number) => codes.push(c) } } };
    expect(resetHttp2Stream(call as unknown as StreamCall, 11)).toBe(true);
    expect(codes).toEqual([11]);
  });

  it('reports false for a call of another shape', () => {
    expect(resetHttp2Stream(new FakeCall(), 11)).toBe(false);
  });
});
