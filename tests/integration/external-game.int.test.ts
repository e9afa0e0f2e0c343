/**
 * A game published by an external game server plays like the engine's (docs/threat-model.md "One
 * writer per game"), on a real broker and Postgres: a player's bet is taken while the round the
 * server opened is in its betting window, refused once the platform's clock closed it (before the
 * server said anything), and the round finished with its revealed seed is on the log with its proof.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sealRound } from '../../rules/rounds/publishing.ts';
import { type AccessTestApi, startAccessTestApi } from '../support/access.ts';
import { until } from '../support/poll.ts';

let t: AccessTestApi;
let server = '';
let player = '';

const SLOT = 3e12;

beforeAll(async () => {
  t = await startAccessTestApi({ GAMES_EXTERNAL: 'slot' });
  const key = await t.app.inject({
    method: 'POST',
    url: '/api/auth/keys',
    headers: { 'x-api-key': t.adminKey },
    payload: { name: 'slot server', scopes: ['publish:rounds:slot'] },
  });
  server = key.json().secret;
  const op = await t.operator();
  player = (await t.player(op.api_token, { game: 'slot', user_id: 'ext-1' })).token;
});
afterAll(async () => {
  await t?.close();
});

const publish = (url: string, payload: object) =>
  t.app.inject({ method: 'POST', url, headers: { 'x-api-key': server }, payload });
const bet = () =>
  t.app.inject({
    method: 'POST',
    url: '/play/bets',
    headers: { authorization: `Bearer ${player}` },
    payload: { amount: 1, selection: {} },
  });

describe('an external game', () => {
  it('takes bets in the window its server opened, refuses them once the platform closed it, and finishes with the proof', async () => {
    const seed = randomBytes(32).toString('hex');
    const sealed = sealRound('slot', seed);
    const opened = await publish('/api/rounds/open', {
      game_slug: 'slot',
      round_id: SLOT + 1,
      betting_ms: 5000,
      commitment: sealed.commitment,
    });
    expect(opened.statusCode).toBe(201);

    const placed = await bet();
    expect(placed.statusCode).toBe(202);
    expect(placed.json()).toMatchObject({ round_id: SLOT + 1 });

    const closesAt = Date.parse(opened.json().betting_closes_at);
    await until(() => Date.now() >= closesAt + 50, 10_000, 'the announced close');
    const late = await bet();
    expect(late.statusCode).toBe(409);
    await until(() => t.phases.phase('slot')?.phase === 'running', 30_000, 'BettingClosed on the log');

    const { game: _g, ...result } = sealed.result as { game: 'slot'; reels: string[]; multiplier: string };
    const finished = await publish('/api/rounds', {
      game_slug: 'slot',
      round_id: SLOT + 1,
      finished_at: new Date().toISOString(),
      result,
      seed,
    });
    expect(finished.statusCode).toBe(201);
    expect(t.phases.phase('slot')).toMatchObject({ phase: 'finished', roundId: SLOT + 1 });
    const bets = (await t.walletEvents()).filter((e) => e.type === 'BetPlaced');
    expect(bets.map((e) => e.value.bet.round_id)).toEqual([SLOT + 1]);
  });
});
