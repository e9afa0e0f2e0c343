/**
 * Finding the rounds a reconnecting SSE subscriber missed (see event-id.ts for the id).
 *
 * Two sources, same answer: recent rounds kept in memory (`RecentRounds`, fed by the hub), used
 * when they reach back to every position of the id, which is the usual case of a client that
 * lost its connection or whose edge went away seconds ago; otherwise the log itself, read from
 * the offsets the broker gives for time `t` up to the high-water mark. Log reads are limited to a
 * few at a time, so a crowd reconnecting with old ids cannot open a consumer group each at once.
 */
import type { Kafka } from 'kafkajs';
import { readRange } from '../../../../lib/log/kafka.ts';
import { decodeRoundEvent } from '../../../../lib/log/rounds-codec.ts';
import type { Logger } from '../../../../lib/logger.ts';
import { Delivery, type Selection, type Subscription, slugsOf } from '../../../../lib/stream/hub.ts';
import type { GameSlug } from '../../../../rules/games/catalog.ts';
import type { RoundEvent } from '../../../../rules/rounds/round.ts';
import type { Position } from './event-id.ts';

/** Rounds kept per game in memory for resumes (about 4 games x 1000 x 1 KB). */
export const RECENT_PER_GAME = 1000;
/** Log time looked back before `t`, ms: covers producer clock skew for games with no position. */
export const LOOKBACK_MARGIN_MS = 5_000;
/** Concurrent log reads for resumes. */
const MAX_LOG_READS = 4;
const LOG_READ_TIMEOUT_MS = 30_000;

/** The newest `RECENT_PER_GAME` rounds of each game, oldest first; subscribe it to the hub as `all`. */
export class RecentRounds implements Subscription {
  readonly selection: Selection = { kind: 'all' };
  private readonly byGame = new Map<GameSlug, Delivery[]>();

  deliver(d: Delivery): void {
    let list = this.byGame.get(d.round.game_slug);
    if (!list) {
      list = [];
      this.byGame.set(d.round.game_slug, list);
    }
    list.push(d);
    if (list.length > RECENT_PER_GAME * 1.25) list.splice(0, list.length - RECENT_PER_GAME);
  }

  /**
   * The rounds of `selection` after `p` in append order, or undefined when memory does not reach
   * back far enough (a game without a position, or one whose last round is older than memory).
   */
  since(selection: Selection, p: Position): Delivery[] | undefined {
    const out: Delivery[] = [];
    for (const slug of slugsOf(selection)) {
      const last = p.last.get(slug);
      const list = this.byGame.get(slug) ?? [];
      if (last === undefined || !list[0] || list[0].round.round_id > last) return undefined;
      for (const d of list) if (d.round.round_id > last) out.push(d);
    }
    return out.sort((a, b) => a.appendedAt - b.appendedAt);
  }
}

let running = 0;
const waiting: (() => void)[] = [];

async function limited<T>(fn: () => Promise<T>): Promise<T> {
  if (running >= MAX_LOG_READS) await new Promise<void>((r) => waiting.push(r));
  running++;
  try {
    return await fn();
  } finally {
    running--;
    waiting.shift()?.();
  }
}

/**
 * Reads the rounds of `selection` after `p` from the log: per partition from the first offset
 * whose timestamp is at least `p.t - LOOKBACK_MARGIN_MS` up to the high-water mark. Per game in
 * round-id order, games merged by append time. Undecodable records are skipped.
 * @throws when the broker cannot be reached or the read takes over 30 s.
 */
export function readMissed(
  kafka: Kafka,
  topic: string,
  selection: Selection,
  p: Position,
  logger: Logger,
): Promise<Delivery[]> {
  return limited(async () => {
    const admin = kafka.admin();
    await admin.connect();
    let starts: { partition: number; offset: string }[];
    try {
      starts = await admin.fetchTopicOffsetsByTimestamp(topic, Math.max(0, p.t - LOOKBACK_MARGIN_MS));
    } finally {
      await admin.disconnect();
    }
    const wanted = new Set<string>(slugsOf(selection));
    const perGame = new Map<string, Delivery[]>();
    await readRange(
      kafka,
      topic,
      new Map(starts.map((s) => [s.partition, BigInt(s.offset)])),
      (r) => {
        let round: RoundEvent;
        try {
          round = decodeRoundEvent(r.message.value);
        } catch {
          logger.debug({ partition: r.partition, offset: r.offset }, 'resume: undecodable record skipped');
          return;
        }
        if (round.type !== 'RoundFinished') return; // lifecycle and cash-outs are not resumed rounds
        const last = p.last.get(round.game_slug) ?? 0;
        if (!wanted.has(round.game_slug) || round.round_id <= last) return;
        const list = perGame.get(round.game_slug) ?? [];
        list.push(new Delivery(round, Number(r.message.timestamp), r.partition, BigInt(r.offset)));
        perGame.set(round.game_slug, list);
      },
      { timeoutMs: LOG_READ_TIMEOUT_MS },
    );
    return mergeByTime(
      [...perGame.values()].map((l) => l.sort((a, b) => a.round.round_id - b.round.round_id)),
    );
  });
}

/** Merges lists each in round order into one, taking the earliest-appended head each time. */
function mergeByTime(lists: Delivery[][]): Delivery[] {
  const out: Delivery[] = [];
  const idx = lists.map(() => 0);
  for (;;) {
    let best = -1;
    for (let i = 0; i < lists.length; i++) {
      const d = lists[i]?.[idx[i] as number];
      const b = best >= 0 ? lists[best]?.[idx[best] as number] : undefined;
      if (d && (!b || d.appendedAt < b.appendedAt)) best = i;
    }
    if (best < 0) return out;
    out.push(lists[best]?.[idx[best] as number] as Delivery);
    idx[best] = (idx[best] as number) + 1;
  }
}
