import { describe, expect, it } from 'vitest';
import type { RoundFinished } from '../../rules/rounds/round.ts';
import { round } from '../../tests/support/edge.ts';
import { lifecycleOf } from '../../tests/support/rounds-client.ts';
import { encodeRoundEvent } from '../log/rounds-codec.ts';
import { END } from './catch-up.ts';
import type { Delivery } from './hub.ts';
import { logCursor } from './log-cursor.ts';
import type { ChunkRecord, LogChunk, LogHistory } from './log-history.ts';

/** A log of two partitions held in memory, served in chunks of 3 records as LogHistory would. */
function fakeHistory(partitions: Map<number, ChunkRecord[]>): LogHistory & { reads: string[] } {
  const reads: string[] = [];
  return {
    reads,
    async chunk(partition: number, offset: bigint, limit: bigint): Promise<LogChunk> {
      reads.push(`${partition}:${offset}`);
      const start = offset - (offset % 3n);
      const end = start + 3n < limit ? start + 3n : limit;
      const records = (partitions.get(partition) ?? []).filter((r) => r.offset >= start && r.offset < end);
      return { partition, start, end, records };
    },
  } as unknown as LogHistory & { reads: string[] };
}

/** A record appended at `timestamp`; a round in it finished then (the time rule admits it). */
const rec = (offset: number, timestamp: number, e: Parameters<typeof encodeRoundEvent>[0]): ChunkRecord => ({
  offset: BigInt(offset),
  key: e.game_slug,
  timestamp,
  value: encodeRoundEvent(e.type === 'RoundFinished' ? { ...e, finished_at: timestamp } : e),
});

async function drain(c: ReturnType<typeof logCursor>): Promise<Delivery[]> {
  const out: Delivery[] = [];
  for (;;) {
    const d = c.next();
    if (d === END) return out;
    if (d === null) await c.load();
    else out.push(d);
  }
}

describe('logCursor', () => {
  const [c1, c2, c3, c4] = [1, 2, 3, 4].map((i) => round('crash', i)) as [
    RoundFinished,
    RoundFinished,
    RoundFinished,
    RoundFinished,
  ];
  const [s1, s2] = [1, 2].map((i) => round('slot', i)) as [RoundFinished, RoundFinished];
  const double = round('double', 1);
  // Partition 0: crash (with a lifecycle pair) and double; partition 1: slot.
  const log = new Map<number, ChunkRecord[]>([
    [
      0,
      [
        rec(0, 10, c1),
        rec(1, 20, double),
        ...lifecycleOf(c2).map((e, i) => rec(2 + i, 25 + i, e)),
        rec(4, 30, c2),
        rec(5, 50, c3),
        rec(6, 70, c4),
      ],
    ],
    [1, [rec(0, 15, s1), rec(1, 40, s2)]],
  ]);

  it('merges the partitions by append time, keeps only the wanted games, rounds and ids', async () => {
    const c = logCursor({
      history: fakeHistory(log),
      from: new Map([
        [0, 0n],
        [1, 0n],
      ]),
      to: new Map([
        [0, 7n],
        [1, 2n],
      ]),
      games: new Set(['crash', 'slot']),
      after: (g) => (g === 'crash' ? c1.round_id : 0),
    });
    const got = await drain(c);
    expect(got.map((d) => [d.round.game_slug, d.appendedAt])).toEqual([
      ['slot', 15],
      ['crash', 30],
      ['slot', 40],
      ['crash', 50],
      ['crash', 70],
    ]);
  });

  it('stops at the live source’s position and reads nothing of a partition already there', async () => {
    const h = fakeHistory(log);
    const c = logCursor({
      history: h,
      from: new Map([
        [0, 4n],
        [1, 2n],
      ]),
      to: new Map([
        [0, 6n],
        [1, 2n],
      ]),
      games: new Set(['crash', 'slot']),
      after: () => 0,
    });
    expect((await drain(c)).map((d) => d.appendedAt)).toEqual([30, 50]);
    expect(h.reads.every((r) => r.startsWith('0:'))).toBe(true);
  });
});
