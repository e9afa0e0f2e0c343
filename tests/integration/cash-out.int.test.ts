/**
 * Crash cash-out end to end on the real broker and Postgres: the round engine
 * flies crash rounds; the API takes a bet in the betting window and cashes it out during the flight
 * by asking the engine, which decides by its clock below the point and appends BetCashedOut before
 * the round's RoundFinished. Bad input: another player's bet, a bet that is not on crash, a flight
 * not started, a finished round, a malformed id; two simultaneous cash-outs make one decision.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKafka, partitionOffsets, readRange } from '../../lib/log/kafka.ts';
import { decodeRoundEvent } from '../../lib/log/rounds-codec.ts';
import { topicName } from '../../lib/log/topics.ts';
import { createLogger } from '../../lib/logger.ts';
import type { RoundEvent } from '../../rules/rounds/round.ts';
import { buildRoundEngine, type RoundEngine } from '../../services/round-engine/engine.ts';
import { type AccessTestApi, startAccessTestApi } from '../support/access.ts';
import { loadConfig } from '../support/config.ts';
import { waitFor } from '../support/poll.ts';

const ns = `t-cash-${randomBytes(4).toString('hex')}-`;
const secret = randomBytes(32).toString('hex');
let engine: RoundEngine;
let t: AccessTestApi;
let op: { api_token: string };

beforeAll(async () => {
  const config = loadConfig(process.env, {
    TOPIC_NAMESPACE: ns,
    TOPIC_PARTITIONS: 1,
    ROUND_GAMES: 'crash',
    ROUND_SPEED: 4,
    ROUND_BETTING_MS: 'crash=2000',
    ROUND_SERVER_SEED: randomBytes(32).toString('hex'),
    ROUND_ENGINE_PORT: 0,
    AUTH_TOKEN_SECRET: secret,
  });
  const logger = createLogger('test', 'silent');
  engine = buildRoundEngine({ config, kafka: createKafka(config, 'cash-out-engine', logger), logger });
  await engine.start();
  t = await startAccessTestApi({
    TOPIC_NAMESPACE: ns,
    AUTH_TOKEN_SECRET: secret,
    API_ENGINE_URL: `http://127.0.0.1:${engine.port()}`,
  });
  op = await t.operator({ base_url: 'http://127.0.0.1:9' });
});
afterAll(async () => {
  await engine?.stop();
  await t?.close();
});

const as = (token: string) => ({ authorization: `Bearer ${token}` });
const bet = (token: string, payload: object) =>
  t.app.inject({ method: 'POST', url: '/play/bets', headers: as(token), payload });
const cashOut = (token: string, txId: number | string) =>
  t.app.inject({ method: 'POST', url: `/play/bets/${txId}/cash-out`, headers: as(token) });

/** Waits for `phase` of the crash round `roundId` (or of any round when omitted). */
const crashPhase = (phase: 'betting' | 'running', roundId?: number) =>
  waitFor(
    `crash ${phase}`,
    () => {
      const p = t.phases.phase('crash');
      return p?.phase === phase && (roundId === undefined || p.opened.round_id === roundId) ? p : undefined;
    },
    30_000,
    5,
  );

async function roundEvents(): Promise<RoundEvent[]> {
  const kafka = t.kafka;
  const topic = topicName(t.config, 'rounds');
  const offsets = await partitionOffsets(kafka, topic);
  const out: RoundEvent[] = [];
  await readRange(kafka, topic, new Map([...offsets].map(([p, o]) => [p, o.low])), (r) => {
    out.push(decodeRoundEvent(r.message.value));
  });
  return out;
}

describe('crash cash-out through the API and the engine', () => {
  it('cashes out during the flight with one decision for two simultaneous requests', async () => {
    const p = await t.player(op.api_token, { user_id: 'pilot', game: 'crash' });
    // A round that busts at 1.00x accepts no cash-out: try a few rounds.
    for (let attempt = 0; attempt < 8; attempt++) {
      const open = await crashPhase('betting');
      const placed = await bet(p.token, { amount: 10, selection: { auto_cashout: '1000000' } });
      expect(placed.statusCode).toBe(202);
      const { tx_id: txId, round_id: roundId } = placed.json() as { tx_id: number; round_id: number };
      expect(roundId).toBe(open.opened.round_id);
      await crashPhase('running', roundId);
      const [a, b] = await Promise.all([cashOut(p.token, txId), cashOut(p.token, txId)]);
      const codes = [a.statusCode, b.statusCode].sort();
      if (
        codes.every((c) => c === 409) &&
        [a, b].some((r) => (r.json() as { code: string }).code === 'CRASHED')
      )
        continue; // this round busted at once
      expect(codes).toEqual([200, 409]);
      const won = (a.statusCode === 200 ? a : b).json() as { multiplier: string; payout: number; at: string };
      const lost = (a.statusCode === 200 ? b : a).json() as { code: string };
      expect(lost.code).toBe('ALREADY_CASHED_OUT');
      expect(Number(won.multiplier)).toBeGreaterThanOrEqual(1);
      expect(won.payout).toBe(Math.floor(1000 * Number(won.multiplier)) / 100);
      // The decision is on the log before the round's end, below its point.
      const events = await waitFor('the round finished', async () => {
        const all = await roundEvents();
        return all.some((e) => e.type === 'RoundFinished' && e.round_id === roundId) ? all : undefined;
      });
      const ofRound = events.filter((e) => e.round_id === roundId);
      const decided = ofRound.filter((e) => e.type === 'BetCashedOut');
      expect(decided).toEqual([expect.objectContaining({ tx_id: txId, multiplier: won.multiplier })]);
      const finished = ofRound.find((e) => e.type === 'RoundFinished');
      if (finished?.type !== 'RoundFinished' || finished.result.game !== 'crash')
        throw new Error('no crash result');
      expect(Number(won.multiplier)).toBeLessThan(Number(finished.result.point));
      expect(ofRound.map((e) => e.type).indexOf('BetCashedOut')).toBeLessThan(
        ofRound.map((e) => e.type).indexOf('RoundFinished'),
      );
      // Asked again after the round: the decision stands.
      expect((await cashOut(p.token, txId)).json()).toMatchObject({ code: 'ALREADY_CASHED_OUT' });
      return;
    }
    throw new Error('no round flew long enough to cash out');
  });

  it('refuses bad cash-outs with problem JSON and appends nothing', async () => {
    const p = await t.player(op.api_token, { user_id: 'bad-pilot', game: 'crash' });
    const other = await t.player(op.api_token, { user_id: 'other', game: 'crash' });
    const open = await crashPhase('betting');
    const placed = (await bet(p.token, { amount: 1, selection: { auto_cashout: '50' } })).json() as {
      tx_id: number;
      round_id: number;
    };
    expect(placed.round_id).toBe(open.opened.round_id);
    const notStarted = await cashOut(p.token, placed.tx_id);
    expect(notStarted.statusCode).toBe(409);
    expect(notStarted.json()).toMatchObject({ code: 'FLIGHT_NOT_STARTED' });
    expect((await cashOut(other.token, placed.tx_id)).statusCode).toBe(404);
    expect((await cashOut(p.token, 'abc')).json()).toMatchObject({ status: 400, detail: /^tx_id: / });
    expect((await cashOut(p.token, '0')).statusCode).toBe(400);
    // A well-formed id that is no bet id is simply no bet of this session.
    expect((await cashOut(p.token, placed.tx_id + 1)).json()).toMatchObject({
      status: 404,
      code: 'BET_NOT_FOUND',
    });
    // After its round is over, the bet is settled by the result.
    await crashPhase('betting');
    await waitFor(
      'a later round',
      () => {
        const ph = t.phases.phase('crash');
        return ph && ph.phase !== 'finished' && ph.opened.round_id > placed.round_id ? true : undefined;
      },
      30_000,
      10,
    );
    const over = await cashOut(p.token, placed.tx_id);
    expect(over.statusCode).toBe(409);
    expect(['ROUND_FINISHED', 'CRASHED']).toContain((over.json() as { code: string }).code);
    // A double bet never cashes out.
    const d = await t.player(op.api_token, { user_id: 'spinner', game: 'double' });
    await t.openRound('double');
    const dBet = (await bet(d.token, { amount: 1, selection: { color: 'red' } })).json() as { tx_id: number };
    expect((await cashOut(d.token, dBet.tx_id)).json()).toMatchObject({ code: 'NOT_A_CRASH_BET' });
    const cashOuts = (await roundEvents()).filter(
      (e) => e.type === 'BetCashedOut' && e.tx_id === placed.tx_id,
    );
    expect(cashOuts).toEqual([]);
  });
});
