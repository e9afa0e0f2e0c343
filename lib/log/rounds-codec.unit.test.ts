import { describe, expect, it } from 'vitest';
import type { RoundFinished } from '../../rules/rounds/round.ts';
import { DecodeError, EncodeError } from '../errors.ts';
import { decode } from './codec.ts';
import { decodeRound, decodeRoundEvent, encodeRound, encodeRoundEvent } from './rounds-codec.ts';

const base = { type: 'RoundFinished', finished_at: Date.UTC(2026, 10, 21, 12, 0, 0), proof: null } as const;
const samples: RoundFinished[] = [
  {
    ...base,
    round_id: 1_000_000_000_001,
    game_id: 1,
    game_slug: 'crash',
    game_type: 'multiplier',
    result: { game: 'crash', point: '2.31' },
    proof: { hash: 'a'.repeat(64), chain_epoch: 0, chain_index: 7, commitment: 'b'.repeat(64) },
  },
  {
    ...base,
    round_id: 2_000_000_000_001,
    game_id: 2,
    game_slug: 'double',
    game_type: 'color',
    result: { game: 'double', color: 'red', number: 3 },
  },
  {
    ...base,
    round_id: 3_000_000_000_001,
    game_id: 3,
    game_slug: 'slot',
    game_type: 'slots',
    result: { game: 'slot', reels: ['seven', 'seven', 'bar'], multiplier: '0.00' },
  },
  {
    ...base,
    round_id: 4_000_000_000_001,
    game_id: 4,
    game_slug: 'wall-street',
    game_type: 'trending',
    result: { game: 'wall-street', trending: 'up' },
  },
];

describe('RoundFinished codec', () => {
  it.each(samples)('round-trips $game_slug through the Confluent wire format', (round) => {
    const buf = encodeRound(round);
    expect(buf[0]).toBe(0);
    expect(buf.readUInt32BE(1)).toBe(1);
    expect(decodeRound(buf)).toEqual(round);
  });

  it.each([
    ['null value', null],
    ['too short', Buffer.from([0, 0, 0])],
    ['bad magic byte', Buffer.from([1, 0, 0, 0, 1, 2])],
    ['unknown schema id', Buffer.from([0, 0, 0, 0, 42, 2])],
    ['truncated body', encodeRound(samples[0] as RoundFinished).subarray(0, 12)],
    ['trailing bytes', Buffer.concat([encodeRound(samples[1] as RoundFinished), Buffer.from([7])])],
  ])('rejects %s with a DecodeError', (_name, buf) => {
    expect(() => decodeRound(buf as Buffer | null)).toThrow(DecodeError);
  });

  it('rejects a result that belongs to another game', () => {
    const wrong = { ...(samples[0] as RoundFinished), game_slug: 'double', game_id: 2 } as RoundFinished;
    expect(() => decodeRound(encodeRound(wrong))).toThrow(/does not belong to game double/);
  });

  it('refuses to encode a value that does not fit the schema, naming the path', () => {
    const bad = {
      ...(samples[1] as RoundFinished),
      result: { game: 'double', color: 'green', number: 3 },
    } as unknown as RoundFinished;
    expect(() => encodeRound(bad)).toThrow(EncodeError);
    expect(() => encodeRound(bad)).toThrow(/result/);
  });

  it('exposes the schema id and subject of a record', () => {
    expect(decode(encodeRound(samples[2] as RoundFinished))).toMatchObject({
      schemaId: 1,
      subject: 'rounds-value',
    });
  });
});

describe('rounds topic events', () => {
  const opened = {
    type: 'RoundOpened',
    round_id: 1_000_000_000_007,
    game_id: 1,
    game_slug: 'crash',
    game_type: 'multiplier',
    betting_opens_at: 1_700_000_000_000,
    betting_closes_at: 1_700_000_007_000,
    chain_epoch: 0,
    chain_index: 7,
    commitment: 'c'.repeat(64),
    speed: 1,
  } as const;
  const closed = {
    type: 'BettingClosed',
    round_id: opened.round_id,
    game_id: 1,
    game_slug: 'crash',
    at: 1_700_000_007_001,
  } as const;
  const cashedOut = {
    type: 'BetCashedOut',
    round_id: opened.round_id,
    game_slug: 'crash',
    tx_id: 4004,
    multiplier: '1.37',
    at: 1_700_000_012_000,
  } as const;

  it('round-trips every event type through its own subject', () => {
    for (const e of [opened, closed, cashedOut, samples[0] as RoundFinished])
      expect(decodeRoundEvent(encodeRoundEvent(e))).toEqual(e);
    expect(decode(encodeRoundEvent(opened)).subject).toBe('casino.rounds.RoundOpened');
    expect(decode(encodeRoundEvent(samples[0] as RoundFinished)).subject).toBe('rounds-value');
  });

  it('keeps decodeRound for RoundFinished only, refusing a lifecycle event by subject', () => {
    expect(() => decodeRound(encodeRoundEvent(closed))).toThrow(
      /casino.rounds.BettingClosed, expected rounds-value/,
    );
  });

  it('refuses a record of another topic and a lifecycle event of an unknown game', () => {
    expect(() => decodeRoundEvent(Buffer.from([0, 0, 0, 0, 4, 2, 3]))).toThrow(DecodeError);
    const bad = encodeRoundEvent({ ...closed, game_slug: 'poker' as 'crash' });
    expect(() => decodeRoundEvent(bad)).toThrow(/unknown game poker/);
  });

  it('gives RoundOpened the same size whatever the result (no result field, fixed-width times)', () => {
    const a = encodeRoundEvent(opened).length;
    expect(encodeRoundEvent({ ...opened, betting_closes_at: opened.betting_closes_at + 5 }).length).toBe(a);
  });
});
