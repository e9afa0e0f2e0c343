import { EventEmitter } from 'node:events';
import type { ServerResponse } from 'node:http';
import { type ClientReadableStream, status } from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';
import type { RoundMsg } from '../grpc/proto.ts';
import { relayToSse, SSE_HEADERS } from './relay.ts';

class FakeCall extends EventEmitter {
  cancelled = 0;
  paused = false;
  cancel() {
    this.cancelled++;
  }
  pause() {
    this.paused = true;
  }
  resume() {
    this.paused = false;
  }
}

class FakeRes extends EventEmitter {
  head?: [number, object];
  body = '';
  full = false;
  writableEnded = false;
  destroyed = false;
  writeHead(code: number, headers: object) {
    this.head = [code, headers];
  }
  write(s: string) {
    this.body += s;
    return !this.full;
  }
  end() {
    this.writableEnded = true;
  }
}

const ROUND: RoundMsg = {
  round_id: 1e12 + 1,
  game_id: 1,
  game_slug: 'crash',
  game_type: 'multiplier',
  finished_at: '2025-01-01T00:00:00.000Z',
  extras: '{"point":"2.00"}',
  timestamp: 1735689600005,
};

function setup() {
  const call = new FakeCall();
  const res = new FakeRes();
  const log = { refused: [] as number[], opened: 0, ended: [] as boolean[] };
  const relay = relayToSse(call as unknown as ClientReadableStream<RoundMsg>, {
    res: res as unknown as ServerResponse,
    heartbeatMs: 60_000,
    onRefused: (e) => log.refused.push(e.code),
    onOpen: () => log.opened++,
    onEnd: (opened) => log.ended.push(opened),
  });
  return { call, res, log, relay };
}

describe('relayToSse', () => {
  it('commits the event stream on the call headers and relays each message in stream form', () => {
    const { call, res, log } = setup();
    expect(res.head).toBeUndefined();
    call.emit('metadata');
    expect(res.head).toEqual([200, SSE_HEADERS]);
    // Fields in another order come out in the seed's order.
    const { round_id, ...rest } = ROUND;
    call.emit('data', { ...rest, round_id });
    expect(res.body).toBe(`: connected\n\nevent: message\ndata: ${JSON.stringify(ROUND)}\n\n`);
    expect(log.opened).toBe(1);
  });

  it('hands a status before the headers to onRefused, without writing', () => {
    const { call, res, log } = setup();
    call.emit('error', { code: status.NOT_FOUND, details: 'Game not found' });
    expect(log.refused).toEqual([status.NOT_FOUND]);
    expect([res.head, res.body, res.writableEnded]).toEqual([undefined, '', false]);
    expect(log.ended).toEqual([false]);
  });

  it('sends a status after the start as event: error and ends the response', () => {
    const { call, res, log } = setup();
    call.emit('metadata');
    call.emit('error', { code: status.RESOURCE_EXHAUSTED, details: 'Bandwidth exhausted' });
    expect(res.body).toContain(
      `event: error\ndata: ${JSON.stringify({ error: 'Bandwidth exhausted', code: 'RESOURCE_EXHAUSTED' })}\n\n`,
    );
    expect(res.writableEnded).toBe(true);
    expect(log.ended).toEqual([true]);
  });

  it('cancels the call when the response closes, once', () => {
    const { call, res, log } = setup();
    call.emit('metadata');
    res.emit('close');
    res.emit('close');
    expect(call.cancelled).toBe(1);
    expect(log.ended).toEqual([true]);
  });

  it('pauses the call while the response buffer is full', () => {
    const { call, res } = setup();
    call.emit('metadata');
    res.full = true;
    call.emit('data', ROUND);
    expect(call.paused).toBe(true);
    res.full = false;
    res.emit('drain');
    expect(call.paused).toBe(false);
  });

  it('end() (shutdown) cancels the call and ends the response', () => {
    const { call, res, relay } = setup();
    call.emit('metadata');
    relay.end();
    expect([call.cancelled, res.writableEnded]).toEqual([1, true]);
  });
});
