/**
 * The game loop on a virtual clock with an in-memory appender (no broker): each game's event
 * sequence per round, and the property that nothing observable before BettingClosed
 * depends on the result: over many rounds, two runs whose results differ (chains of other seeds
 * under one published commitment) append the same RoundOpened and BettingClosed bytes at the same
 * times relative to the round's opening; only what follows BettingClosed differs.
 */
import { describe, expect, it } from 'vitest';
import { encodeRoundEvent } from '../../lib/log/rounds-codec.ts';
import { createLogger } from '../../lib/logger.ts';
import { buildChain, type HashChain } from '../../rules/fairness/chain.ts';
import { GAME_SLUGS, type GameSlug } from '../../rules/games/catalog.ts';
import { type ChainSource, initialState } from '../../rules/rounds/decider.ts';
import type { RoundEvent } from '../../rules/rounds/round.ts';
import type { Appender } from './appender.ts';
import { GameLane, runGameLoop } from './game-loop.ts';

const T0 = 1_800_000_000_000;
const ROUNDS = 150;
const logger = createLogger('test', 'silent');

/** A chain of `seed` published under one fixed commitment, so only the hashes (the results) differ. */
function chainsOf(seed: number): ChainSource {
  const built = new Map<string, HashChain>();
  return (slug, epoch) => {
    const key = `${slug}:${epoch}`;
    const real = built.get(key) ?? buildChain(Buffer.alloc(32, seed), slug, epoch, ROUNDS + 5, 2);
    built.set(key, real);
    return { slug, epoch, length: real.length, commitment: 'ab'.repeat(32), hashAt: (i) => real.hashAt(i) };
  };
}

/** Runs `ROUNDS` rounds of `game` on a virtual clock; every appended event with its append time. */
async function run(game: GameSlug, seed: number): Promise<{ event: RoundEvent; at: number }[]> {
  let now = T0;
  const appended: { event: RoundEvent; at: number }[] = [];
  const abort = new AbortController();
  let finished = 0;
  const appender: Appender = {
    connect: async () => {},
    connected: () => true,
    close: async () => {},
    async append(event) {
      appended.push({ event, at: now });
      if (event.type === 'RoundFinished' && ++finished === ROUNDS) abort.abort();
    },
  };
  const lane = new GameLane(game, appender, initialState(game), abort.signal);
  await runGameLoop({
    lane,
    chains: chainsOf(seed),
    bettingMs: {},
    speed: 1,
    clock: () => now,
    signal: abort.signal,
    log: logger,
    sleep: async (ms) => {
      now += ms;
    },
  });
  return appended;
}

/** The events of each round, by round id, in append order. */
function byRound(events: { event: RoundEvent; at: number }[]) {
  const m = new Map<number, { event: RoundEvent; at: number }[]>();
  for (const e of events) m.set(e.event.round_id, [...(m.get(e.event.round_id) ?? []), e]);
  return m;
}

/** What an observer sees of a round up to BettingClosed, times relative to its opening. */
function beforeClose(list: { event: RoundEvent; at: number }[]) {
  const opened = list[0];
  if (opened?.event.type !== 'RoundOpened') throw new Error('a round must start with RoundOpened');
  const t0 = opened.at;
  const upToClose = list.slice(0, list.findIndex((e) => e.event.type === 'BettingClosed') + 1);
  return upToClose.map(({ event, at }) => {
    const shifted =
      event.type === 'RoundOpened'
        ? {
            ...event,
            betting_opens_at: event.betting_opens_at - t0,
            betting_closes_at: event.betting_closes_at - t0,
          }
        : { ...event, at: event.type === 'BettingClosed' ? event.at - t0 : 0 };
    return {
      type: event.type,
      after: at - t0,
      bytes: encodeRoundEvent(shifted as RoundEvent).toString('hex'),
    };
  });
}

describe('game loop', () => {
  it.each(GAME_SLUGS)(
    '%s: every round is RoundOpened, BettingClosed, RoundFinished, back to back',
    async (game) => {
      const rounds = byRound(await run(game, 1));
      expect(rounds.size).toBe(ROUNDS);
      let lastFinish = T0;
      for (const list of rounds.values()) {
        expect(list.map((e) => e.event.type)).toEqual(['RoundOpened', 'BettingClosed', 'RoundFinished']);
        const [o, c, f] = list as [(typeof list)[0], (typeof list)[0], (typeof list)[0]];
        // The next round opens as the last one finishes; betting closes at the announced time.
        expect(o.at).toBe(lastFinish);
        if (o.event.type !== 'RoundOpened' || c.event.type !== 'BettingClosed') throw new Error('order');
        expect(c.at).toBe(o.event.betting_closes_at);
        expect(f.at).toBeGreaterThanOrEqual(c.at);
        lastFinish = f.at;
      }
    },
  );

  it.each(GAME_SLUGS)('%s: nothing before BettingClosed depends on the result (%d rounds)', async (game) => {
    const a = byRound(await run(game, 1));
    const b = byRound(await run(game, 2));
    let differing = 0;
    for (const [id, listA] of a) {
      const listB = b.get(id);
      if (!listB) throw new Error(`round ${id} missing in the second run`);
      expect(beforeClose(listA), `round ${id}`).toEqual(beforeClose(listB));
      const resultOf = (l: typeof listA) =>
        JSON.stringify(l.find((e) => e.event.type === 'RoundFinished')?.event);
      if (resultOf(listA) !== resultOf(listB)) differing++;
    }
    // The runs really had other results (else the comparison proves nothing).
    expect(differing).toBeGreaterThan(ROUNDS / 3);
  });
});
