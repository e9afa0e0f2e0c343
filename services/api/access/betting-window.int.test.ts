/**
 * Bets only inside the betting window read from the log, the current round in
 * public, and demo balances that no concurrency overspends, on the real broker and
 * Postgres. Rounds are opened and closed by appending the engine's records straight to the log.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { updateBreaker } from '../../../lib/db/operator-breakers.ts';
import { partitionOffsets, readRange } from '../../../lib/log/kafka.ts';
import { decodeRoundEvent } from '../../../lib/log/rounds-codec.ts';
import { topicName } from '../../../lib/log/topics.ts';
import { decodeWalletEvent } from '../../../lib/log/wallet-events.ts';
import * as settlement from '../../../rules/bets/settle.ts';
import { afterBetAnswer, afterProbe } from '../../../rules/wallet/breaker.ts';
import { type AccessTestApi, startAccessTestApi } from '../../../tests/support/access.ts';
import { waitFor } from '../../../tests/support/poll.ts';

let t: AccessTestApi;
let op: { operator_id: string; api_token: string };

beforeAll(async () => {
  t = await startAccessTestApi();
  op = await t.operator({ base_url: 'http://127.0.0.1:9' });
});
afterAll(async () => {
  await t?.close();
});

const as = (token: string) => ({ authorization: `Bearer ${token}` });
const bet = (token: string, payload: object) =>
  t.app.inject({ method: 'POST', url: '/play/bets', headers: as(token), payload });
const current = (game: string) => t.app.inject({ method: 'GET', url: `/api/rounds/current/${game}` });

describe('bets only while betting is open', () => {
  it('refuses a bet while no round of the game is open: 409 BETTING_CLOSED, nothing appended', async () => {
    const p = await t.player(op.api_token, { user_id: 'w0', game: 'wall-street' });
    const before = await t.end('walletTransactions');
    const res = await bet(p.token, { amount: 1, selection: { trend: 'up' } });
    expect(res.statusCode).toBe(409);
    expect(res.json()).toMatchObject({ code: 'BETTING_CLOSED', next_round_opens_at: null, status: 409 });
    expect(await t.end('walletTransactions')).toBe(before);
    expect(await t.count('play_bets')).toBe(0);
  });

  it('takes a bet in the window, then refuses after BettingClosed with the next opening time', async () => {
    const p = await t.player(op.api_token, { user_id: 'w1', game: 'double' });
    const round = await t.openRound('double');
    const ok = await bet(p.token, { amount: 1, selection: { color: 'red' } });
    expect(ok.statusCode).toBe(202);
    expect(ok.json()).toMatchObject({ round_id: round });
    await t.closeBetting('double');
    const closed = await bet(p.token, { amount: 1, selection: { color: 'red' } });
    expect(closed.statusCode).toBe(409);
    const body = closed.json() as { code: string; next_round_opens_at: string };
    expect(body.code).toBe('BETTING_CLOSED');
    // The double's spin takes 5 s after the close: the next round opens then (speed 1).
    const p2 = t.phases.phase('double');
    if (p2?.phase !== 'running') throw new Error('expected the round running');
    expect(body.next_round_opens_at).toBe(new Date(p2.closedAt + 5000).toISOString());
  });

  it('tells no opening time during a crash flight (it would reveal the point)', async () => {
    const p = await t.player(op.api_token, { user_id: 'w2', game: 'crash' });
    await t.openRound('crash');
    await t.closeBetting('crash');
    const res = await bet(p.token, { amount: 1, selection: { auto_cashout: '2.00' } });
    expect(res.statusCode).toBe(409);
    expect(res.json()).toMatchObject({ code: 'BETTING_CLOSED', next_round_opens_at: null });
  });

  it('refuses after the announced close by its own clock, before BettingClosed reaches the log', async () => {
    const p = await t.player(op.api_token, { user_id: 'w3', game: 'slot' });
    await t.openRound('slot', 300);
    await new Promise((r) => setTimeout(r, 400));
    const res = await bet(p.token, { amount: 1, selection: {} });
    expect(res.statusCode).toBe(409);
    expect(res.json()).toMatchObject({ code: 'BETTING_CLOSED' });
  });

  it('refuses a round that is running, an older one and a later one, naming round_id', async () => {
    const p = await t.player(op.api_token, { user_id: 'w4', game: 'double' });
    const running = t.phases.phase('double');
    if (running?.phase !== 'running') throw new Error('expected the double round running');
    const open = await t.openRound('double');
    const sel = { color: 'black' };
    const older = await bet(p.token, { amount: 1, round_id: running.opened.round_id, selection: sel });
    expect(older.statusCode).toBe(409);
    expect(older.json()).toMatchObject({
      code: 'BETTING_CLOSED',
      detail: expect.stringMatching(/^round_id: /),
    });
    const later = await bet(p.token, { amount: 1, round_id: open + 1, selection: sel });
    expect(later.statusCode).toBe(409);
    expect(later.json()).toMatchObject({ code: 'ROUND_NOT_OPEN', open_round_id: open });
    expect((await bet(p.token, { amount: 1, round_id: open, selection: sel })).statusCode).toBe(202);
  });
});

describe('GET /api/rounds/current/:game', () => {
  it('shows the round taking bets, then running, with ISO times', async () => {
    const id = await t.openRound('slot', 30_000);
    const betting = await current('slot');
    expect(betting.statusCode).toBe(200);
    expect(betting.headers['access-control-allow-origin']).toBe('*');
    const b = betting.json() as Record<string, unknown>;
    expect(b).toMatchObject({ game_slug: 'slot', round_id: id, phase: 'betting' });
    expect(Date.parse(b.betting_closes_at as string) - Date.parse(b.betting_opens_at as string)).toBe(30_000);
    await t.closeBetting('slot');
    expect((await current('slot')).json()).toMatchObject({ round_id: id, phase: 'running' });
  });

  it('answers the seed’s 400 and 404, and phase "between" while no round is open', async () => {
    expect((await current('Bad_Slug')).json()).toEqual({ error: 'Invalid game slug', success: false });
    expect((await current('Bad_Slug')).statusCode).toBe(400);
    expect((await current('poker')).statusCode).toBe(404);
    const none = await current('wall-street');
    expect(none.statusCode).toBe(200);
    expect(none.json()).toEqual({
      game_slug: 'wall-street',
      round_id: null,
      phase: 'between',
      betting_opens_at: null,
      betting_closes_at: null,
    });
  });
});

describe('demo balances', () => {
  it('takes exactly one of 50 concurrent bets that each need 90% of the balance', async () => {
    const p = await t.player(op.api_token, {
      user_id: 'demo-race',
      game: 'double',
      demo: true,
      balance: 100,
    });
    await t.openRound('double');
    const results = await Promise.all(
      Array.from({ length: 50 }, () => bet(p.token, { amount: 90, selection: { color: 'red' } })),
    );
    const codes = results.map((r) => r.statusCode);
    expect(codes.filter((c) => c === 202)).toHaveLength(1);
    expect(codes.filter((c) => c === 402)).toHaveLength(49);
    const bal = await t.app.inject({ method: 'GET', url: '/play/balance', headers: as(p.token) });
    expect(bal.json()).toMatchObject({ balance: '10.00', demo: true });
  });
});

describe('cash-out without a round engine', () => {
  it('answers 503 and leaves the bet free to cash out again (nothing decided)', async () => {
    const p = await t.player(op.api_token, { user_id: 'lonely', game: 'crash' });
    await t.openRound('crash');
    const placed = (await bet(p.token, { amount: 1, selection: { auto_cashout: '100' } })).json() as {
      tx_id: number;
    };
    await t.closeBetting('crash');
    const cashOut = () =>
      t.app.inject({ method: 'POST', url: `/play/bets/${placed.tx_id}/cash-out`, headers: as(p.token) });
    const first = await cashOut();
    expect(first.statusCode).toBe(503);
    expect(first.headers['content-type']).toMatch(/problem\+json/);
    expect((await cashOut()).statusCode).toBe(503);
    const [row] = await t.sql<
      { cash_out: string | null }[]
    >`select cash_out from play_bets where tx_id = ${placed.tx_id}`;
    expect(row?.cash_out).toBeNull();
  });
});

describe('an operator whose circuit breaker is open', () => {
  it('refuses its players new bets at once: 503 OPERATOR_UNAVAILABLE with Retry-After, nothing appended; a closed breaker takes them again', async () => {
    const other = await t.operator({ base_url: 'http://127.0.0.1:9' });
    const p = await t.player(other.api_token, { user_id: 'tripped', game: 'double' });
    const demo = await t.player(other.api_token, { user_id: 'tripped-demo', game: 'double', demo: true });
    await t.openRound('double', 60_000);
    const cfg = { failures: 1, cooldownMs: 30_000, maxCooldownMs: 60_000 };
    // The saga's own writer opens it, as after a failed bet callback.
    await updateBreaker(
      t.sql,
      other.operator_id,
      (s) => afterBetAnswer(s, 'failed', 'HTTP 500', Date.now(), cfg),
      Date.now(),
    );
    // The API reads breakers through a 500 ms cache.
    await new Promise((r) => setTimeout(r, 600));
    const before = await t.end('walletTransactions');
    const res = await bet(p.token, { amount: 1, selection: { color: 'red' } });
    expect(res.statusCode).toBe(503);
    expect(res.headers['content-type']).toMatch(/problem\+json/);
    expect(res.json()).toMatchObject({ status: 503, code: 'OPERATOR_UNAVAILABLE' });
    expect(Number(res.headers['retry-after'])).toBeGreaterThanOrEqual(28);
    expect(Number(res.headers['retry-after'])).toBeLessThanOrEqual(30);
    expect(await t.end('walletTransactions')).toBe(before);
    // Demo bets call no operator: they go on.
    expect((await bet(demo.token, { amount: 1, selection: { color: 'red' } })).statusCode).toBe(202);
    // Another operator's players are not affected.
    const q = await t.player(op.api_token, { user_id: 'unaffected', game: 'double' });
    expect((await bet(q.token, { amount: 1, selection: { color: 'red' } })).statusCode).toBe(202);
    // A successful half-open probe closes it.
    await updateBreaker(
      t.sql,
      other.operator_id,
      (s) => afterProbe(s, true, null, Date.now(), cfg),
      Date.now(),
    );
    await new Promise((r) => setTimeout(r, 600));
    expect((await bet(p.token, { amount: 1, selection: { color: 'red' } })).statusCode).toBe(202);
  });
});

/** Every record of a topic with its broker append time (LogAppendTime), decoded. */
async function appended<T>(topic: string, decode: (b: Buffer | null) => T): Promise<{ at: number; e: T }[]> {
  const out: { at: number; e: T }[] = [];
  const from = new Map([...(await partitionOffsets(t.kafka, topic)).keys()].map((p) => [p, 0n]));
  await readRange(t.kafka, topic, from, (r) => {
    out.push({ at: Number(r.message.timestamp), e: decode(r.message.value) });
  });
  return out;
}

/** What settlement decides of each BetPlaced of `round` on the log (rules/bets/settle.ts, its own rule). */
async function settlementFate(round: number): Promise<Map<number, 'cancelled' | 'settles'>> {
  const closed = (await appended(topicName(t.config, 'rounds'), decodeRoundEvent)).find(
    (x) => x.e.type === 'BettingClosed' && x.e.round_id === round,
  );
  if (!closed) throw new Error('no BettingClosed on the log');
  const fate = new Map<number, 'cancelled' | 'settles'>();
  for (const x of await appended(topicName(t.config, 'walletTransactions'), decodeWalletEvent)) {
    if (x.e.type !== 'BetPlaced' || x.e.value.bet.round_id !== round) continue;
    const state = settlement.evolve(undefined, x.e, x.at) as settlement.BetState;
    const out = settlement.decide(
      state,
      {
        round_id: round,
        game_slug: 'double',
        finished_at: closed.at + 5000,
        result: { game: 'double', color: 'red', number: 3 },
        bettingClosedAt: closed.at,
      },
      closed.at + 6000,
    );
    fate.set(x.e.value.tx_id, out[0]?.type === 'BetRejected' ? 'cancelled' : 'settles');
  }
  return fate;
}

describe('a failover holding the append back (acks: all waits for the dead leader to be fenced)', () => {
  it('answers 202 only for a bet on the log before the close: the held one and the one queued behind it get 409, and settlement cancels no 202', async () => {
    const walletTopic = topicName(t.config, 'walletTransactions');
    const p1 = await t.player(op.api_token, { user_id: 'f1', game: 'double' });
    const p2 = await t.player(op.api_token, { user_id: 'f2', game: 'double' });
    const round = await t.openRound('double', 2500);
    const opened = t.phases.phase('double');
    if (opened?.phase !== 'betting') throw new Error('expected the round open');
    const closesAt = opened.opened.betting_closes_at;
    // The broker path is held as a failover holds it: the appender's send waits, unanswered.
    let release: () => void = () => {};
    const held = new Promise<void>((r) => {
      release = r;
    });
    let sendsHeld = 0;
    const send = t.producer.send.bind(t.producer);
    t.producer.send = async (r) => {
      if (r.topic === walletTopic) {
        sendsHeld++;
        await held;
      }
      return send(r);
    };
    try {
      const first = bet(p1.token, { amount: 1, selection: { color: 'red' } });
      await waitFor('the first bet sent', () => (sendsHeld === 1 ? true : undefined), 5000, 5);
      const second = bet(p2.token, { amount: 1, selection: { color: 'red' } });
      // The second is queued behind the first once its counter is taken (the step before the append).
      await waitFor(
        'the second bet queued',
        async () => {
          const [r] = await t.sql<{ bets: number }[]>`
            select bets from access_round_bets where user_id = 'f2' and round_id = ${round}`;
          return r?.bets === 1 ? true : undefined;
        },
        5000,
        10,
      );
      await new Promise((r) => setTimeout(r, 200));
      expect(Date.now()).toBeLessThan(closesAt); // both were taken inside the window
      await new Promise((r) => setTimeout(r, closesAt - Date.now() + 50));
      await t.closeBetting('double');
      release();
      const [a, b] = await Promise.all([first, second]);
      const fate = await settlementFate(round);
      const bets = (await appended(walletTopic, decodeWalletEvent)).filter(
        (x) => x.e.type === 'BetPlaced' && x.e.value.bet.round_id === round,
      );
      for (const res of [a, b]) {
        if (res.statusCode !== 202) continue;
        const tx = (res.json() as { tx_id: number }).tx_id;
        expect(fate.get(tx), `bet ${tx} answered 202 is ${fate.get(tx)}`).toBe('settles');
      }
      // The held one reached the log after the close: 409, with its tx_id, cancelled by settlement.
      expect(a.statusCode).toBe(409);
      const ab = a.json() as { code: string; tx_id: number; round_id: number };
      expect(ab).toMatchObject({ code: 'BETTING_CLOSED', round_id: round });
      expect(fate.get(ab.tx_id)).toBe('cancelled');
      // The queued one was never sent: 409, nothing on the log, its counter given back.
      expect(b.statusCode).toBe(409);
      expect(b.json()).toMatchObject({ code: 'BETTING_CLOSED' });
      expect(b.json()).not.toHaveProperty('tx_id');
      expect(bets).toHaveLength(1);
      const [c] = await t.sql<{ bets: number }[]>`
        select bets from access_round_bets where user_id = 'f2' and round_id = ${round}`;
      expect(c?.bets).toBe(0);
    } finally {
      release();
      t.producer.send = send;
    }
  });
});

describe("a failover holding the round's close back as well", () => {
  it('answers 202 for a bet appended after the announced close but before BettingClosed: settlement settles it', async () => {
    const walletTopic = topicName(t.config, 'walletTransactions');
    const p = await t.player(op.api_token, { user_id: 'f3', game: 'double' });
    const round = await t.openRound('double', 1000);
    const opened = t.phases.phase('double');
    if (opened?.phase !== 'betting') throw new Error('expected the round open');
    const closesAt = opened.opened.betting_closes_at;
    let release: () => void = () => {};
    const held = new Promise<void>((r) => {
      release = r;
    });
    let sent = 0;
    let acked = false;
    const send = t.producer.send.bind(t.producer);
    t.producer.send = async (r) => {
      if (r.topic !== walletTopic) return send(r);
      sent++;
      await held;
      const out = await send(r);
      acked = true;
      return out;
    };
    try {
      const answer = bet(p.token, { amount: 1, selection: { color: 'red' } });
      await waitFor('the bet sent', () => (sent === 1 ? true : undefined), 5000, 5);
      await new Promise((r) => setTimeout(r, closesAt - Date.now() + 50));
      // The bet lands after the announced close; the engine's BettingClosed, held too, after it.
      release();
      await waitFor('the bet on the log', () => (acked ? true : undefined), 5000, 5);
      await new Promise((r) => setTimeout(r, 300));
      await t.closeBetting('double');
      const res = await answer;
      const fate = await settlementFate(round);
      expect(res.statusCode, res.body).toBe(202);
      expect(fate.get((res.json() as { tx_id: number }).tx_id)).toBe('settles');
    } finally {
      release();
      t.producer.send = send;
    }
  });
});
