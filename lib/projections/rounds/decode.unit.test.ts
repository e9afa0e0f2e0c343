import type { IHeaders, KafkaMessage } from 'kafkajs';
import { describe, expect, it } from 'vitest';
import { sampleRound } from '../../../tests/support/projector.ts';
import { encodeRound } from '../../log/rounds-codec.ts';
import { decodeMessages } from './decode.ts';

const T0 = Date.UTC(2026, 0, 1);
const msg = (offset: number, value: Buffer | null, headers: IHeaders = {}): KafkaMessage => ({
  key: Buffer.from('crash'),
  value,
  offset: String(offset),
  timestamp: String(T0 + offset),
  attributes: 0,
  headers,
});

describe('decodeMessages', () => {
  it('decodes valid records with their offset and append time, and sets aside the rest with the reason', () => {
    const round = sampleRound('crash', 1, T0);
    const { events, undecodable } = decodeMessages([
      msg(10, encodeRound(round)),
      msg(11, Buffer.from('not avro at all')),
      msg(12, Buffer.from([0, 0, 0, 0, 99, 1, 2, 3])),
      msg(13, null),
      msg(14, encodeRound(sampleRound('double', 1, T0))),
    ]);
    expect(events.map((e) => e.offset)).toEqual([10n, 14n]);
    expect(events[0]?.event).toEqual({ round, appendedAt: T0 + 10 });
    expect(undecodable.map((u) => [u.message.offset, u.reason])).toEqual([
      ['11', 'bad magic byte 110'],
      ['12', 'unknown schema id 99'],
      ['13', 'record too short (0 bytes)'],
    ]);
  });
});

describe('decodeMessages: the time rule', () => {
  it('sets aside a round from the future or the past with its reason, and keeps the rounds after it', () => {
    const at = (offset: number) => T0 + offset;
    const { events, undecodable } = decodeMessages([
      msg(20, encodeRound(sampleRound('slot', 5, at(20) + 600_000))),
      msg(21, encodeRound(sampleRound('slot', 6, Date.parse('0000-01-01T00:00:00Z')))),
      msg(22, encodeRound(sampleRound('slot', 2, at(22) - 5))),
    ]);
    expect(events.map((e) => e.event.round.round_id)).toEqual([3_000_000_000_002]);
    expect(undecodable.map((u) => [u.message.offset, u.reason.split(':')[0]])).toEqual([
      ['20', 'round refused (future)'],
      ['21', 'round refused (past)'],
    ]);
  });
});
