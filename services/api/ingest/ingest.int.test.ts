/**
 * POST /api/rounds on a real broker and Postgres: scope, validation, append, and idempotency on
 * (game, round_id) against this process's recent appends and the rounds read model.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { partitionOffsets, readRange } from '../../../lib/log/kafka.ts';
import { decodeRound } from '../../../lib/log/rounds-codec.ts';
import { topicName } from '../../../lib/log/topics.ts';
import { insertRounds } from '../../../tests/support/api.ts';
import { type AuthTestApi, startAuthTestApi } from '../../../tests/support/auth.ts';

let t: AuthTestApi;
let publisher = '';
let reader = '';

beforeAll(async () => {
  t = await startAuthTestApi();
  const mk = async (scopes: string[]) =>
    (
      await t.app.inject({
        method: 'POST',
        url: '/api/auth/keys',
        headers: { 'x-api-key': t.adminKey },
        payload: { name: 'game server', scopes },
      })
    ).json().secret as string;
  publisher = await mk(['publish:rounds']);
  reader = await mk(['read:rounds']);
});
afterAll(async () => {
  await t?.close();
});

const post = (payload: unknown, key = publisher) =>
  t.app.inject({
    method: 'POST',
    url: '/api/rounds',
    headers: { 'x-api-key': key },
    payload: payload as object,
  });

const crash = (seq: number, point: string) => ({
  game_slug: 'crash',
  round_id: 1e12 + seq,
  finished_at: '2026-11-22T00:00:00.000Z',
  result: { point },
});

describe('POST /api/rounds', () => {
  it('appends a new round once; the same again is a duplicate, other data a conflict', async () => {
    const before = await t.roundsTopicEnd();
    const first = await post(crash(1, '2.35'));
    expect(first.statusCode).toBe(201);
    expect(first.json()).toEqual({ success: true, duplicate: false });
    expect(await t.roundsTopicEnd()).toBe(before + 1n);

    expect((await post(crash(1, '2.35'))).json()).toEqual({ success: true, duplicate: true });
    const conflict = await post(crash(1, '3.00'));
    expect(conflict.statusCode).toBe(409);
    expect(conflict.json().success).toBe(false);
    expect(await t.roundsTopicEnd()).toBe(before + 1n);

    const topic = topicName(t.config, 'rounds');
    const from = new Map([...(await partitionOffsets(t.kafka, topic)).keys()].map((p) => [p, 0n]));
    const got: unknown[] = [];
    await readRange(t.kafka, topic, from, (r) => {
      got.push(decodeRound(r.message.value));
    });
    expect(got).toEqual([
      expect.objectContaining({
        round_id: 1e12 + 1,
        game_slug: 'crash',
        result: { game: 'crash', point: '2.35' },
        proof: null,
      }),
    ]);
  });

  it('recognises a round the read model already holds', async () => {
    await insertRounds(t.sql, [
      {
        game: 'double',
        seq: 7,
        finishedAt: Date.parse('2026-11-22T00:00:01Z'),
        value: 'red',
        extras: { color: 'red', number: 3 },
      },
    ]);
    const before = await t.roundsTopicEnd();
    const same = {
      game_slug: 'double',
      round_id: 2e12 + 7,
      finished_at: '2026-11-22T00:00:01Z',
      result: { color: 'red', number: 3 },
    };
    expect((await post(same)).json()).toEqual({ success: true, duplicate: true });
    expect((await post({ ...same, result: { color: 'black', number: 9 } })).statusCode).toBe(409);
    expect(await t.roundsTopicEnd()).toBe(before);
  });

  it.each([
    ['unknown game', { ...crash(2, '2.00'), game_slug: 'poker' }, /game_slug/],
    ['round id of another game', { ...crash(2, '2.00'), round_id: 2e12 + 2 }, /round_id/],
    ['point below 1.00', crash(2, '0.99'), /point/],
    ['point without decimals', crash(2, '2'), /point/],
    ['finished_at not ISO', { ...crash(2, '2.00'), finished_at: 'yesterday' }, /finished_at/],
    [
      'double colour not matching',
      {
        game_slug: 'double',
        round_id: 2e12 + 1,
        finished_at: '2026-11-22T00:00:00Z',
        result: { color: 'red', number: 0 },
      },
      /white/,
    ],
  ])('refuses %s with 400 and appends nothing', async (_n, body, pattern) => {
    const before = await t.roundsTopicEnd();
    const res = await post(body);
    expect(res.statusCode).toBe(400);
    expect(res.json().error).toMatch(pattern);
    expect(await t.roundsTopicEnd()).toBe(before);
  });

  it('needs publish:rounds even with AUTH_REQUIRE_API off', async () => {
    expect(
      (await t.app.inject({ method: 'POST', url: '/api/rounds', payload: crash(3, '2.00') })).json(),
    ).toMatchObject({ reason: 'missing' });
    expect((await post(crash(3, '2.00'), reader)).json()).toEqual({
      error: 'Forbidden',
      success: false,
      reason: 'scope',
    });
  });
});
