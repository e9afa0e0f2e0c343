/**
 * The publisher API on a real broker and Postgres (docs/threat-model.md "One writer per game"): a key
 * writes only the external games it is bound to, never the round engine's; an external round is
 * opened with a commitment, closed by the platform's clock and finished only as the open round, after
 * its window, within the clock skew, with the seed of its commitment. Every refusal appends nothing.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { partitionOffsets, readRange } from '../../../lib/log/kafka.ts';
import { decodeRoundEvent, encodeRoundEvent } from '../../../lib/log/rounds-codec.ts';
import { topicName } from '../../../lib/log/topics.ts';
import { sealRound } from '../../../rules/rounds/publishing.ts';
import type { RoundEvent } from '../../../rules/rounds/round.ts';
import { insertRounds } from '../../../tests/support/api.ts';
import { type AuthTestApi, startAuthTestApi } from '../../../tests/support/auth.ts';
import { until, waitFor } from '../../../tests/support/poll.ts';

let t: AuthTestApi;
let slotKey = '';
let legacyKey = '';
let reader = '';

const SLOT = 3e12;
const WALL = 4e12;

beforeAll(async () => {
  t = await startAuthTestApi({ GAMES_EXTERNAL: 'slot,wall-street', GAMES_EXTERNAL_SKEW_MS: 3000 });
  const mk = async (scopes: string[]) =>
    (
      await t.app.inject({
        method: 'POST',
        url: '/api/auth/keys',
        headers: { 'x-api-key': t.adminKey },
        payload: { name: 'game server', scopes },
      })
    ).json().secret as string;
  slotKey = await mk(['publish:rounds:slot']);
  legacyKey = await mk(['publish:rounds']);
  reader = await mk(['read:rounds']);
});
afterAll(async () => {
  await t?.close();
});

const send = (url: string, payload: unknown, key: string) =>
  t.app.inject({ method: 'POST', url, headers: { 'x-api-key': key }, payload: payload as object });
const open = (payload: object, key = slotKey) => send('/api/rounds/open', payload, key);
const finish = (payload: object, key = slotKey) => send('/api/rounds', payload, key);

/** Every event on the test's rounds topic, in log order of its one partition. */
async function events(): Promise<RoundEvent[]> {
  const topic = topicName(t.config, 'rounds');
  const from = new Map([...(await partitionOffsets(t.kafka, topic)).keys()].map((p) => [p, 0n]));
  const got: RoundEvent[] = [];
  await readRange(t.kafka, topic, from, (r) => {
    got.push(decodeRoundEvent(r.message.value));
  });
  return got;
}

/** A slot round's finish body for `seed`, finished now. */
const slotFinish = (roundId: number, seed: string, at = Date.now()) => ({
  game_slug: 'slot',
  round_id: roundId,
  finished_at: new Date(at).toISOString(),
  result: (({ game: _g, ...r }) => r)(sealRound('slot', seed).result as { game: 'slot' }),
  seed,
});

/** Refused with `status` (error text matching `pattern`) and nothing appended. */
async function refused(
  res: Promise<{ statusCode: number; json(): { error: string; detail?: string } }>,
  status: number,
  pattern: RegExp,
) {
  const before = await t.roundsTopicEnd();
  const r = await res;
  expect(r.statusCode).toBe(status);
  const body = r.json();
  expect(`${body.error} ${body.detail ?? ''}`).toMatch(pattern);
  expect(await t.roundsTopicEnd()).toBe(before);
}

describe('one writer per game', () => {
  it("refuses every key a result for the engine's open round (the forged-result finding) and appends nothing", async () => {
    // The engine opened crash round 1 and betting is open; a publish key posts a result for it.
    const producer = t.producer;
    await producer.send({
      topic: topicName(t.config, 'rounds'),
      acks: -1,
      messages: [
        {
          key: 'crash',
          value: encodeRoundEvent({
            type: 'RoundOpened',
            round_id: 1e12 + 1,
            game_id: 1,
            game_slug: 'crash',
            game_type: 'multiplier',
            betting_opens_at: Date.now(),
            betting_closes_at: Date.now() + 60_000,
            chain_epoch: 0,
            chain_index: 1,
            commitment: 'a'.repeat(64),
            speed: 1,
          }),
        },
      ],
    });
    await waitFor('the crash round seen open', () => t.phases.phase('crash'), 10_000, 20);
    const forged = {
      game_slug: 'crash',
      round_id: 1e12 + 1,
      finished_at: new Date().toISOString(),
      result: { point: '1.00' },
      seed: 'b'.repeat(64),
    };
    // Exactly as it was found: a publish:rounds key, the result with multiplier-like point 1.00, no seed.
    const { seed: _seed, ...asFound } = forged;
    const before = await t.roundsTopicEnd();
    expect((await finish(asFound, legacyKey)).statusCode).toBeGreaterThanOrEqual(400);
    expect(await t.roundsTopicEnd()).toBe(before);
    for (const key of [legacyKey, slotKey, t.adminKey])
      await refused(finish(forged, key), 403, /round engine writes the rounds of crash/);
    await refused(finish({ ...forged, round_id: 1e12 + 5 }, legacyKey), 403, /crash/);
    await refused(
      open({ game_slug: 'crash', round_id: 1e12 + 2, betting_ms: 1000, commitment: 'a'.repeat(64) }),
      403,
      /crash/,
    );
    expect(t.phases.phase('crash')?.phase).toBe('betting');
  });

  it('refuses a key an external game it is not bound to', async () => {
    const body = {
      game_slug: 'wall-street',
      round_id: WALL + 1,
      betting_ms: 1000,
      commitment: 'a'.repeat(64),
    };
    await refused(open(body), 403, /not bound to wall-street/);
    await refused(open(body, legacyKey), 403, /not bound to wall-street/);
    await refused(open(body, t.adminKey), 403, /not bound to wall-street/);
    expect((await open(body, reader)).json()).toMatchObject({ reason: 'scope' });
  });

  it('shows the binding in the admin API, implies publish:rounds, and grants none for an engine game or a public key', async () => {
    const list = await t.app.inject({
      method: 'GET',
      url: '/api/auth/keys',
      headers: { 'x-api-key': t.adminKey },
    });
    const bound = list
      .json()
      .keys.filter((k: { publish_games: string[] }) => k.publish_games.includes('slot'));
    expect(bound).toHaveLength(1);
    expect(bound[0].scopes).toEqual(expect.arrayContaining(['publish:rounds', 'publish:rounds:slot']));
    const engine = await t.app.inject({
      method: 'POST',
      url: '/api/auth/keys',
      headers: { 'x-api-key': t.adminKey },
      payload: { name: 'x', scopes: ['publish:rounds:crash'] },
    });
    expect(engine.statusCode).toBe(400);
    expect(engine.json().error).toMatch(/publish:rounds:crash.*round engine writes crash/);
    const pub = await t.app.inject({
      method: 'POST',
      url: '/api/auth/keys',
      headers: { 'x-api-key': t.adminKey },
      payload: {
        name: 'x',
        kind: 'public',
        allowed_origins: ['https://a.example'],
        scopes: ['publish:rounds:slot'],
      },
    });
    expect(pub.statusCode).toBe(400);
  });
});

describe('an external round: open, close by the platform clock, finish', () => {
  const seed = randomBytes(32).toString('hex');
  const { commitment } = sealRound('slot', seed);

  it('opens only the next round id, one at a time', async () => {
    await refused(
      open({ game_slug: 'slot', round_id: SLOT + 5, betting_ms: 1000, commitment }),
      409,
      /round_id must be 3000000000001/,
    );
    const res = await open({ game_slug: 'slot', round_id: SLOT + 1, betting_ms: 1500, commitment });
    expect(res.statusCode).toBe(201);
    const body = res.json();
    expect(body).toMatchObject({ success: true, round_id: SLOT + 1 });
    expect(Date.parse(body.betting_closes_at) - Date.parse(body.betting_opens_at)).toBe(1500);
    expect(t.phases.phase('slot')).toMatchObject({
      phase: 'betting',
      opened: { round_id: SLOT + 1, commitment },
    });
    await refused(
      open({ game_slug: 'slot', round_id: SLOT + 2, betting_ms: 1000, commitment }),
      409,
      /still open/,
    );
  });

  it('refuses the result while betting is open, for another round, or a round from the future', async () => {
    await refused(finish(slotFinish(SLOT + 1, seed)), 409, /betting on round 3000000000001 is open/);
    await refused(finish(slotFinish(SLOT + 4, seed)), 409, /not open/);
  });

  it('closes betting by its own clock with no request from the server', async () => {
    const closed = await waitFor(
      'BettingClosed appended at the announced close',
      async () => (await events()).find((e) => e.type === 'BettingClosed' && e.round_id === SLOT + 1),
      10_000,
    );
    const opened = (await events()).find((e) => e.type === 'RoundOpened' && e.round_id === SLOT + 1);
    expect(closed).toMatchObject({
      at: opened && 'betting_closes_at' in opened ? opened.betting_closes_at : -1,
    });
    await until(() => t.phases.phase('slot')?.phase === 'running', 10_000, 'the slot round running');
  });

  it('refuses finished_at outside the skew, a seed that is not the commitment, and a result the seed does not give', async () => {
    await refused(finish(slotFinish(SLOT + 1, seed, Date.now() + 10 * 60_000)), 400, /finished_at/);
    await refused(
      finish({ ...slotFinish(SLOT + 1, seed), finished_at: '9999-12-31T23:59:59Z' }),
      400,
      /finished_at/,
    );
    await refused(
      finish({ ...slotFinish(SLOT + 1, seed), finished_at: '0000-01-01T00:00:00Z' }),
      400,
      /finished_at/,
    );
    const other = randomBytes(32).toString('hex');
    await refused(finish(slotFinish(SLOT + 1, other)), 400, /SHA-256 of seed is not the commitment/);
    const wrong = { ...slotFinish(SLOT + 1, seed), result: { reels: ['X'], multiplier: '1.00' } };
    await refused(finish(wrong), 400, /result is not the one the seed gives/);
  });

  it('finishes the open round with its proof; a retry is a duplicate, other data a conflict', async () => {
    const body = slotFinish(SLOT + 1, seed);
    const res = await finish(body);
    expect(res.statusCode).toBe(201);
    const finished = (await events()).filter((e) => e.type === 'RoundFinished' && e.game_slug === 'slot');
    expect(finished).toEqual([
      expect.objectContaining({
        round_id: SLOT + 1,
        result: sealRound('slot', seed).result,
        proof: { hash: seed, chain_epoch: 0, chain_index: 1, commitment },
      }),
    ]);
    expect((await finish(body)).json()).toEqual({ success: true, duplicate: true });
    await refused(
      finish({ ...body, finished_at: new Date(Date.now() - 1000).toISOString() }),
      409,
      /already recorded/,
    );
    expect(t.phases.phase('slot')).toMatchObject({ phase: 'finished', roundId: SLOT + 1 });
    // The next round is the one after it.
    await refused(
      open({ game_slug: 'slot', round_id: SLOT + 1, betting_ms: 1000, commitment }),
      409,
      /3000000000002/,
    );
  });

  it('recognises a retry the read model holds although this process forgot it', async () => {
    const seed2 = randomBytes(32).toString('hex');
    await insertRounds(t.sql, [
      {
        game: 'slot',
        seq: 77,
        finishedAt: Date.parse('2026-11-22T00:00:01Z'),
        value: '1.00',
        extras: { reels: ['A'], multiplier: '1.00' },
      },
    ]);
    await t.sql`update rounds set proof = ${t.sql.json({ hash: seed2, chain_epoch: 0, chain_index: 1 })}
      where round_id = ${SLOT + 77}`;
    const same = {
      game_slug: 'slot',
      round_id: SLOT + 77,
      finished_at: '2026-11-22T00:00:01Z',
      result: { reels: ['A'], multiplier: '1.00' },
      seed: seed2,
    };
    const before = await t.roundsTopicEnd();
    expect((await finish(same)).json()).toEqual({ success: true, duplicate: true });
    expect(await t.roundsTopicEnd()).toBe(before);
  });

  it('needs a credential even with AUTH_REQUIRE_API off', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/rounds',
      payload: slotFinish(SLOT + 2, seed),
    });
    expect(res.json()).toMatchObject({ reason: 'missing' });
  });
});
