import type { ServiceDefinition } from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';
import {
  encodeRoundEventMsg,
  loadDataStream,
  SERVICE_NAME,
} from '../../services/edge/transports/grpc/proto.ts';
import { decodeEvent, encodeEventsRequest } from './src/protobuf.ts';
import { SseParser } from './src/sse-parser.ts';

const round = {
  round_id: 1_000_000_000_042,
  game_id: 1,
  game_slug: 'crash',
  game_type: 'multiplier',
  finished_at: '2025-01-01T00:00:00.000Z',
  extras: '{"point":"2.50"}',
  timestamp: 1_735_689_600_005,
};

describe('the client’s protobuf against the server’s (proto/datastream.proto)', () => {
  it('decodes every RoundEvent the edge writes', () => {
    expect(
      decodeEvent(
        encodeRoundEventMsg({ type: 'round', position: 't=1;crash=42', round, prev: 41 }),
        'game:crash',
      ),
    ).toEqual({
      type: 'round',
      sub: 'game:crash',
      position: 't=1;crash=42',
      data: round,
      prev: 41,
    });
    expect(
      decodeEvent(encodeRoundEventMsg({ type: 'round', position: 'p', round, replay: true }), 'game:crash'),
    ).toMatchObject({ replay: true });
    expect(
      decodeEvent(
        encodeRoundEventMsg({
          type: 'recovered',
          position: 'p',
          recovered: { recovered: false, since: 't=9', replayed: 0, reason: 'position time in the future' },
        }),
        'all',
      ),
    ).toEqual({
      type: 'recovered',
      sub: 'all',
      position: 'p',
      data: { recovered: false, since: 't=9', replayed: 0, reason: 'position time in the future' },
    });
    const lifecycle = {
      event: 'round-opened',
      game_slug: 'crash',
      game_id: 1,
      round_id: 7,
      betting_opens_at: 'a',
      betting_closes_at: 'b',
      commitment: 'ab'.repeat(32),
      chain_epoch: 2,
      chain_index: 3,
      speed: 2.5,
      timestamp: 4,
    };
    expect(
      decodeEvent(encodeRoundEventMsg({ type: 'lifecycle', position: 'p', lifecycle }), 'game:crash'),
    ).toEqual({
      type: 'lifecycle',
      sub: 'game:crash',
      position: 'p',
      data: lifecycle,
    });
  });

  it('encodes the request the edge reads', () => {
    const def = loadDataStream()[SERVICE_NAME] as ServiceDefinition;
    const decode = (def.StreamRoundEvents as ServiceDefinition[string]).requestDeserialize;
    expect(
      decode(
        Buffer.from(encodeEventsRequest({ game_type: 'color', since: 't=1', latest: true, lifecycle: true })),
      ),
    ).toEqual({
      game_type: 'color',
      since: 't=1',
      latest: true,
      lifecycle: true,
    });
  });
});

describe('SseParser', () => {
  it('splits events across chunks, keeps the last id, reports comments', () => {
    const events: unknown[] = [];
    const comments: string[] = [];
    const p = new SseParser(
      (m) => events.push(m),
      (c) => comments.push(c),
    );
    p.feed('event: initial\nid: t=1\ndata: {"a"');
    p.feed(':1}\n\n: heartbeat\n\ndata: x\r\n\r\n');
    expect(events).toEqual([
      { event: 'initial', data: '{"a":1}', id: 't=1' },
      { event: 'message', data: 'x', id: 't=1' },
    ]);
    expect(comments).toEqual(['heartbeat']);
  });
});
