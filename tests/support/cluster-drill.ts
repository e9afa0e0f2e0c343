/**
 * What the cluster drills (tests/drills/cluster-*.e2e.test.ts) read back from a private Kafka
 * cluster: which node leads most partitions of some topics, the rounds and wallet events with the
 * broker's append time (the topics use LogAppendTime, lib/log/topics.ts), the longest gap between
 * two of them, each round's proof, and whether every consumer group has committed up to the log's
 * end. Not a test file.
 */
import type { Kafka } from 'kafkajs';
import type { Sql } from '../../lib/db/pool.ts';
import { partitionOffsets, readRange } from '../../lib/log/kafka.ts';
import { decodeRoundEvent } from '../../lib/log/rounds-codec.ts';
import { decodeWalletEvent, type WalletEvent } from '../../lib/log/wallet-events.ts';
import { verifyRound } from '../../rules/fairness/verify.ts';
import type { RoundFinished } from '../../rules/rounds/round.ts';
import { type ClientRecord, recordProblems } from './client-page.ts';
import { waitFor } from './poll.ts';

/** One record with the broker's append time, ms since the epoch. */
export interface Timed<T> {
  readonly at: number;
  readonly partition: number;
  readonly value: T;
}

/** Every record of `topic`, decoded by `decode`, with its append time, in offset order per partition. */
async function readTimed<T>(kafka: Kafka, topic: string, decode: (b: Buffer) => T): Promise<Timed<T>[]> {
  const offsets = await partitionOffsets(kafka, topic);
  const out: Timed<T>[] = [];
  await readRange(
    kafka,
    topic,
    new Map([...offsets].map(([p, o]) => [p, o.low])),
    (r) => {
      out.push({
        at: Number(r.message.timestamp),
        partition: r.partition,
        value: decode(r.message.value as Buffer),
      });
    },
    120_000,
  );
  return out;
}

/** Every RoundFinished of the rounds topic `topic`, with its append time. */
export async function finishedRounds(kafka: Kafka, topic: string): Promise<Timed<RoundFinished>[]> {
  const all = await readTimed(kafka, topic, (b) => decodeRoundEvent(b));
  return all.flatMap((r) =>
    r.value.type === 'RoundFinished' ? [{ ...r, value: r.value as unknown as RoundFinished }] : [],
  );
}

/** The append time of each round's first BettingClosed on the rounds topic `topic`, by round id. */
export async function bettingClosedAt(kafka: Kafka, topic: string): Promise<Map<number, number>> {
  const closes = new Map<number, number>();
  for (const r of await readTimed(kafka, topic, (b) => decodeRoundEvent(b)))
    if (r.value.type === 'BettingClosed') {
      const prev = closes.get(r.value.round_id);
      if (prev === undefined || r.at < prev) closes.set(r.value.round_id, r.at);
    }
  return closes;
}

/**
 * The rollbacks of the wallet log split by what the player was told: a bet whose BetPlaced reached the
 * log before its round's BettingClosed was answered 202, so its rollback voids an accepted bet; one
 * that reached the log at or after the close was answered 409 (the API judges the acknowledgement
 * against the close on the log, as settlement does), so its rollback returns a stake the player was
 * told did not play.
 */
export function rollbacksByAnswer(
  events: readonly Timed<WalletEvent>[],
  closes: ReadonlyMap<number, number>,
): { readonly voided: string[]; readonly refusedLate: string[] } {
  const placed = new Map<number, { at: number; round: number }>();
  for (const e of events)
    if (e.value.type === 'BetPlaced')
      placed.set(e.value.value.tx_id, { at: e.at, round: e.value.value.bet.round_id });
  const voided: string[] = [];
  const refusedLate: string[] = [];
  for (const e of events) {
    if (e.value.type !== 'RollbackRequested') continue;
    const r = e.value.value;
    const bet = placed.get(r.linked_tx_id);
    const close = bet && closes.get(bet.round);
    const line = `bet ${r.linked_tx_id}: ${r.reason} at ${new Date(e.at).toISOString()}`;
    if (bet && close !== undefined && bet.at >= close) refusedLate.push(line);
    else voided.push(line);
  }
  return { voided, refusedLate };
}

/** Every event of the wallet-transactions topic `topic`, with its append time. */
export async function walletEventsTimed(kafka: Kafka, topic: string): Promise<Timed<WalletEvent>[]> {
  return await readTimed(kafka, topic, (b) => decodeWalletEvent(b));
}

/** Round ids per game in log order, as tests/support/drill.ts `roundsInLog` gives them. */
export function roundIds(rounds: readonly Timed<RoundFinished>[]): Map<string, number[]> {
  const byGame = new Map<string, number[]>();
  for (const r of rounds)
    byGame.set(r.value.game_slug, [...(byGame.get(r.value.game_slug) ?? []), r.value.round_id]);
  return byGame;
}

/** The longest gap, ms, between consecutive times of one group (`key`) appended within [from, to]. */
export function longestGap<T>(
  records: readonly Timed<T>[],
  key: (v: T) => string,
  from: number,
  to: number,
): { ms: number; key: string; at: number } {
  const last = new Map<string, number>();
  let best = { ms: 0, key: '', at: 0 };
  for (const r of [...records].sort((a, b) => a.at - b.at)) {
    const k = key(r.value);
    const prev = last.get(k);
    last.set(k, r.at);
    if (prev === undefined || r.at < from || prev > to) continue;
    if (r.at - prev > best.ms) best = { ms: r.at - prev, key: k, at: prev };
  }
  return best;
}

/** The median gap, ms, between consecutive records of one group (a game's cadence at the drill's speed). */
export function medianGap<T>(records: readonly Timed<T>[], key: (v: T) => string): number {
  const last = new Map<string, number>();
  const gaps: number[] = [];
  for (const r of [...records].sort((a, b) => a.at - b.at)) {
    const prev = last.get(key(r.value));
    if (prev !== undefined) gaps.push(r.at - prev);
    last.set(key(r.value), r.at);
  }
  gaps.sort((a, b) => a - b);
  return gaps[Math.floor(gaps.length / 2)] ?? 0;
}

/** Rounds whose proof does not verify against their predecessor of the same game (rules/fairness/verify.ts). */
export function unverified(rounds: readonly Timed<RoundFinished>[]): string[] {
  const prev = new Map<string, RoundFinished>();
  const bad: string[] = [];
  for (const { value: r } of rounds) {
    const p = prev.get(r.game_slug);
    const sameChain = p?.proof?.chain_epoch === r.proof?.chain_epoch;
    if (!verifyRound(r, p && sameChain ? p : undefined).ok) bad.push(`${r.game_slug} ${r.round_id}`);
    prev.set(r.game_slug, r);
  }
  return bad;
}

/**
 * The node that leads the most partitions of `topics` (ties: the lowest id), and the count per node.
 */
export async function busiestLeader(
  kafka: Kafka,
  topics: readonly string[],
): Promise<{ node: number; led: Map<number, number> }> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    const { topics: meta } = await admin.fetchTopicMetadata({ topics: [...topics] });
    const led = new Map<number, number>();
    for (const t of meta) for (const p of t.partitions) led.set(p.leader, (led.get(p.leader) ?? 0) + 1);
    const node = [...led].sort((a, b) => b[1] - a[1] || a[0] - b[0])[0]?.[0];
    if (node === undefined) throw new Error(`no leaders for ${topics.join(', ')}`);
    return { node, led };
  } finally {
    await admin.disconnect();
  }
}

/**
 * Partitions of `topics` where `group`'s committed offset is not the log end, as
 * `group topic/partition committed/end`; an empty partition without a commit counts as at its end.
 */
export async function commitsBehind(
  kafka: Kafka,
  group: string,
  topics: readonly string[],
): Promise<string[]> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    const out: string[] = [];
    const committed = await admin.fetchOffsets({ groupId: group, topics: [...topics] });
    for (const t of committed) {
      const ends = await admin.fetchTopicOffsets(t.topic);
      for (const p of t.partitions) {
        const range = ends.find((e) => e.partition === p.partition);
        // A partition that never held a record (the four games leave one of `rounds` empty) has
        // nothing to commit: -1 there is at its end.
        if (p.offset === '-1' && range?.high === range?.low) continue;
        if (p.offset !== range?.high)
          out.push(`${group} ${t.topic}/${p.partition} ${p.offset}/${range?.high}`);
      }
    }
    return out;
  } finally {
    await admin.disconnect();
  }
}

/**
 * The round appended latest after it finished within [from, to] (append time − `finished_at`, ms):
 * how long the engine stood still, whatever the game's own cadence (a crash flight's length varies).
 */
export function latestAppend(
  rounds: readonly Timed<RoundFinished>[],
  from: number,
  to: number,
): { ms: number; round: string } {
  let best = { ms: 0, round: '' };
  for (const r of rounds) {
    if (r.at < from || r.value.finished_at > to) continue;
    const ms = r.at - r.value.finished_at;
    if (ms > best.ms) best = { ms, round: `${r.value.game_slug} ${r.value.round_id}` };
  }
  return best;
}

/** Waits (up to 120 s) until the rounds read model of `sql` holds `count` rows: the whole log. */
export async function awaitReadModelOf(sql: Sql, count: number): Promise<void> {
  await waitFor(
    'the read model to hold the whole log',
    async () => {
      const [r] = await sql<{ n: number }[]>`select count(*)::int as n from rounds`;
      return r?.n === count ? true : undefined;
    },
    120_000,
    500,
  );
}

/**
 * What the subscribers still miss of `log` (round ids per game, log order), after waiting up to 60 s
 * for them to have every round once and in order: `<name>: <problem>` lines, empty when none.
 */
export async function subscriberProblems(
  clients: readonly { readonly name: string; readonly c: { readonly record: ClientRecord } }[],
  log: ReadonlyMap<string, readonly number[]>,
  games: Readonly<Record<string, readonly string[]>>,
): Promise<string[]> {
  const problems = () =>
    clients.flatMap(({ name, c }) => recordProblems(c.record, log, games).map((p) => `${name}: ${p}`));
  await waitFor(
    'every subscriber to have every round',
    () => (problems().length === 0 ? true : undefined),
    60_000,
    250,
  ).catch(() => {});
  return problems();
}

/** Bets of the wallet read model that have not reached their end (neither succeeded nor failed). */
export async function openBets(sql: Sql): Promise<number> {
  const [open] = await sql<{ n: number }[]>`
    select count(*)::int as n from wallet_transactions where kind = 'bet' and status not in ('succeeded', 'failed')`;
  return open?.n ?? -1;
}
