/**
 * A catch-up cursor over the log itself (resumable from any point of the log, on any
 * edge): the rounds of some games between a start and an end offset of every partition, read in
 * chunks through the edge's LogHistory, merged across partitions by append time (each game lives
 * on one partition, so its rounds come in log order), and filtered by a per-game last round id.
 */
import type { GameSlug } from '../../rules/games/catalog.ts';
import { type CatchUpCursor, END } from './catch-up.ts';
import type { Delivery } from './hub.ts';
import { deliveryOf, type LogChunk, type LogHistory } from './log-history.ts';

interface PartitionCursor {
  readonly partition: number;
  next: bigint;
  readonly end: bigint;
  chunk: LogChunk | undefined;
  /** Index in `chunk.records` of the record at `next`, once found. */
  idx: number;
  /** The next wanted round of this partition, found but not given yet. */
  head: Delivery | undefined;
}

export interface LogCursorOptions {
  readonly history: LogHistory;
  /** First offset to read per partition. */
  readonly from: ReadonlyMap<number, bigint>;
  /** Offset per partition (exclusive) where the catch-up ends: the live source's position. */
  readonly to: ReadonlyMap<number, bigint>;
  /** Games wanted. */
  readonly games: ReadonlySet<GameSlug>;
  /** Rounds of a game up to this id are skipped (already given). */
  readonly after: (slug: GameSlug) => number;
}

/** A cursor over [from, to) of each partition. Partitions absent from `to` are not read. */
export function logCursor(opts: LogCursorOptions): CatchUpCursor {
  const parts: PartitionCursor[] = [];
  for (const [partition, end] of opts.to) {
    const next = opts.from.get(partition) ?? end;
    if (next < end) parts.push({ partition, next, end, chunk: undefined, idx: 0, head: undefined });
  }

  /** Finds the head of `p`; false when a chunk must be read first. */
  const seek = (p: PartitionCursor): boolean => {
    while (p.head === undefined && p.next < p.end) {
      const c = p.chunk;
      if (!c || p.next >= c.end) return false;
      let r = c.records[p.idx];
      if (!r || r.offset !== p.next) {
        p.idx = c.records.findIndex((x) => x.offset >= p.next);
        if (p.idx < 0) {
          p.next = c.end; // nothing left in this chunk (compacted or skipped offsets)
          continue;
        }
        r = c.records[p.idx];
      }
      if (!r) return false;
      p.next = r.offset + 1n;
      p.idx++;
      if (!opts.games.has(r.key as GameSlug)) continue; // another game: skipped undecoded
      const d = deliveryOf(p.partition, r);
      if (d && d.round.round_id > opts.after(d.round.game_slug)) p.head = d;
    }
    return true;
  };

  return {
    next() {
      let best: PartitionCursor | undefined;
      let open = false;
      for (const p of parts) {
        if (!seek(p)) return null;
        if (p.head === undefined) continue;
        open = true;
        if (!best || p.head.appendedAt < (best.head as Delivery).appendedAt) best = p;
      }
      if (!open || !best) return END;
      const d = best.head as Delivery;
      best.head = undefined;
      return d;
    },
    async load() {
      await Promise.all(
        parts
          .filter((p) => p.head === undefined && p.next < p.end && (!p.chunk || p.next >= p.chunk.end))
          .map(async (p) => {
            p.chunk = await opts.history.chunk(p.partition, p.next, p.end);
            p.idx = 0;
          }),
      );
    },
  };
}
