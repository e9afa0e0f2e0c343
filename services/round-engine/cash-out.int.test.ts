/**
 * Manual cash-outs decided by the round engine during a crash flight, on the real broker: an
 * accepted cash-out is a BetCashedOut in the log before its round's RoundFinished, at the flight's
 * multiplier for the engine's clock, below the crash point; the same bet asked again gets the same
 * answer and one record; no decision outside a flight; the internal endpoint wants the signature.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { INTERNAL_SIGNATURE_HEADER, signInternal } from '../../lib/auth/internal-signature.ts';
import { loadTokenSecret } from '../../lib/auth/token-secret.ts';
import { createKafka, partitionOffsets, readRange } from '../../lib/log/kafka.ts';
import { decodeRoundEvent } from '../../lib/log/rounds-codec.ts';
import { ensureTopics, topicName } from '../../lib/log/topics.ts';
import { createLogger } from '../../lib/logger.ts';
import { ROUND_ID_BASE } from '../../rules/rounds/decider.ts';
import { flightMultiplier } from '../../rules/rounds/lifecycle.ts';
import type { RoundEvent } from '../../rules/rounds/round.ts';
import { loadConfig } from '../../tests/support/config.ts';
import { waitFor } from '../../tests/support/poll.ts';
import { buildRoundEngine, type RoundEngine } from './engine.ts';
import { CASH_OUT_PURPOSE } from './http.ts';

const config = loadConfig(process.env, {
  TOPIC_NAMESPACE: `t-${randomBytes(4).toString('hex')}-`,
  ROUND_GAMES: 'crash',
  ROUND_SPEED: 10,
  ROUND_SERVER_SEED: randomBytes(32).toString('hex'),
  ROUND_ENGINE_PORT: 0,
  AUTH_TOKEN_SECRET: randomBytes(32).toString('hex'),
});
const logger = createLogger('test', 'silent');
const kafka = createKafka(config, 'cash-out-int', logger);
const topic = topicName(config, 'rounds');
let engine: RoundEngine;
let nextTx = 1000;

async function readEvents(): Promise<RoundEvent[]> {
  const offsets = await partitionOffsets(kafka, topic);
  const out: RoundEvent[] = [];
  await readRange(kafka, topic, new Map([...offsets].map(([p, o]) => [p, o.low])), (r) => {
    out.push(decodeRoundEvent(r.message.value));
  });
  return out;
}

/** The crash round the engine is on: the one after its last finished round. */
const currentRound = () => ROUND_ID_BASE + (engine.states()[0]?.sequence ?? 0) + 1;

beforeAll(async () => {
  const admin = kafka.admin();
  await admin.connect();
  await ensureTopics(admin, config, ['rounds']);
  await admin.disconnect();
  engine = buildRoundEngine({ config, kafka, logger });
  await engine.start();
});

afterAll(async () => {
  await engine?.stop();
  const admin = kafka.admin();
  await admin.connect();
  await admin.deleteTopics({ topics: [topic] }).catch(() => {});
  await admin.disconnect();
});

describe('cash-out decided by the engine', () => {
  it('accepts during the flight below the point, before RoundFinished in the log, once per bet', async () => {
    // Ask until a flight accepts (a round that busts at 1.00x accepts none).
    const { roundId, tx, answer } = await waitFor(
      'an accepted cash-out',
      async () => {
        const r = currentRound();
        nextTx += 4;
        const t = nextTx;
        const a = await engine.cashOut('crash', r, t);
        return a.status === 'accepted' ? { roundId: r, tx: t, answer: a } : undefined;
      },
      60_000,
      20,
    );
    expect(await engine.cashOut('crash', roundId, tx)).toEqual(answer);
    const events = await waitFor('the round finished in the log', async () => {
      const all = await readEvents();
      return all.some((e) => e.type === 'RoundFinished' && e.round_id === roundId) ? all : undefined;
    });
    const ofRound = events.filter((e) => e.round_id === roundId);
    const cashOuts = ofRound.filter((e) => e.type === 'BetCashedOut' && e.tx_id === tx);
    expect(cashOuts).toHaveLength(1);
    const types = ofRound.map((e) => e.type);
    expect(types.indexOf('BetCashedOut')).toBeLessThan(types.indexOf('RoundFinished'));
    expect(types.indexOf('BettingClosed')).toBeLessThan(types.indexOf('BetCashedOut'));
    const closed = ofRound.find((e) => e.type === 'BettingClosed');
    const finished = ofRound.find((e) => e.type === 'RoundFinished');
    if (
      answer.status !== 'accepted' ||
      closed?.type !== 'BettingClosed' ||
      finished?.type !== 'RoundFinished'
    )
      throw new Error('unreachable');
    expect(Number(answer.multiplier)).toBeLessThan(
      Number(finished.result.game === 'crash' && finished.result.point),
    );
    expect(answer.at).toBeGreaterThanOrEqual(closed.at);
    expect(answer.at).toBeLessThanOrEqual(finished.finished_at);
    expect(answer.multiplier).toBe(flightMultiplier({ startedAt: closed.at, speed: 10 }, answer.at));
    // After the round: no decision at all.
    expect(await engine.cashOut('crash', roundId, nextTx + 4)).toEqual({ status: 'not-flying' });
  });

  it('decides nothing for a round that is not in flight', async () => {
    expect(await engine.cashOut('crash', currentRound() + 5, 1)).toEqual({ status: 'not-flying' });
    expect(await engine.cashOut('double', currentRound(), 1)).toEqual({ status: 'not-flying' });
  });

  it('serves the decision on POST /internal/cash-out only with the internal signature', async () => {
    const secret = await loadTokenSecret(config.auth);
    const body = JSON.stringify({ game: 'crash', round_id: currentRound() + 7, tx_id: 8 });
    const post = (payload: string, signature?: string) =>
      engine.http.inject({
        method: 'POST',
        url: '/internal/cash-out',
        headers: {
          'content-type': 'application/json',
          ...(signature ? { [INTERNAL_SIGNATURE_HEADER]: signature } : {}),
        },
        payload,
      });
    expect((await post(body)).statusCode).toBe(401);
    expect((await post(body, signInternal(secret, 'other', body))).statusCode).toBe(401);
    const signed = await post(body, signInternal(secret, CASH_OUT_PURPOSE, body));
    expect(signed.statusCode).toBe(409);
    expect(signed.json()).toEqual({ status: 'not-flying' });
    const bad = JSON.stringify({ game: 'poker', round_id: 1, tx_id: 1 });
    expect((await post(bad, signInternal(secret, CASH_OUT_PURPOSE, bad))).statusCode).toBe(400);
  });
});
