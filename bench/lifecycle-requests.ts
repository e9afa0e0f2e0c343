/**
 * The HTTP side of the cash-out measure of bench/lifecycle.ts: demo players made through the
 * public routes (an operator registered with the run's admin key, POST /games/request-access with
 * `demo: true`, POST /play/open), requests sent at a fixed pace whatever the answers do (open loop,
 * so a slow answer delays no later request), and a baseline route measured at the same pace.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { waitFor } from '../tests/support/poll.ts';
import { wallNow } from './edge-wire.ts';

/** A request's outcome: when it left and when its answer was read (wall-clock ms), and the answer. */
export interface Timed<T = unknown> {
  readonly sentAt: number;
  readonly answeredAt: number;
  /** HTTP status, or 0 when no answer came. */
  readonly status: number;
  readonly body: T | undefined;
}

/** POSTs (with `body`) or GETs `url` and times it; a failed request is status 0. */
export async function timed<T>(
  url: string,
  headers: Record<string, string>,
  body?: unknown,
): Promise<Timed<T>> {
  const sentAt = wallNow();
  try {
    const res = await fetch(url, {
      method: body === undefined ? 'GET' : 'POST',
      headers: body === undefined ? headers : { ...headers, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(10_000),
    });
    const parsed = (await res.json().catch(() => undefined)) as T | undefined;
    return { sentAt, answeredAt: wallNow(), status: res.status, body: parsed };
  } catch {
    return { sentAt, answeredAt: wallNow(), status: 0, body: undefined };
  }
}

/**
 * Calls `fire(i)` at `ratePerS` (the i-th call due at start + i / rate), without waiting for what
 * it starts, while `keepGoing()` holds; a late timer fires the calls it owes at once.
 * @returns how many calls were made and the pacing's span, ms.
 */
export async function paced(
  ratePerS: number,
  keepGoing: () => boolean,
  fire: (i: number) => void,
): Promise<{ calls: number; ms: number }> {
  const period = 1000 / ratePerS;
  const t0 = performance.now();
  let i = 0;
  for (;;) {
    const wait = t0 + i * period - performance.now();
    if (wait > 0) await sleep(wait);
    if (!keepGoing()) break;
    fire(i++);
  }
  return { calls: i, ms: performance.now() - t0 };
}

/** `seconds` of GETs of `url` at `ratePerS`. @returns every request, once all are answered. */
export async function pacedGets(
  url: string,
  headers: Record<string, string>,
  ratePerS: number,
  seconds: number,
): Promise<Timed[]> {
  const until = performance.now() + seconds * 1000;
  const pending: Promise<Timed>[] = [];
  await paced(
    ratePerS,
    () => performance.now() < until,
    () => pending.push(timed(url, headers)),
  );
  return await Promise.all(pending);
}

/** A demo player: its bearer for the /play routes. */
export interface Player {
  readonly token: string;
}

/**
 * Registers an operator (the API's admin routes; its callbacks point nowhere, as demo sessions
 * call none) and opens `n` demo sessions on crash.
 * @throws when a request is refused (naming it and the answer).
 */
export async function demoPlayers(apiUrl: string, adminKey: string, n: number): Promise<Player[]> {
  // The admin key is usable once the API's key table has read it back from the log.
  const op = await waitFor(
    'the operator registered',
    async () => {
      const r = await timed<{ api_token: string }>(
        `${apiUrl}/admin/operators`,
        { 'x-api-key': adminKey },
        { name: 'bench lifecycle', callback_form: 'A', base_url: 'http://127.0.0.1:9' },
      );
      return r.status === 201 ? r.body : undefined;
    },
    30_000,
    250,
  );
  const players: Player[] = [];
  for (let i = 0; i < n; i++) {
    const access = await timed<{ game_url: string }>(
      `${apiUrl}/games/request-access`,
      { authorization: `Bearer ${op?.api_token}` },
      { game: 'crash', user_id: `bench-${i}`, username: `Bench ${i}`, demo: true, balance: 1_000_000 },
    );
    if (access.status !== 200)
      throw new Error(`request-access: ${access.status} ${JSON.stringify(access.body)}`);
    const launch = new URL(access.body?.game_url ?? '').searchParams.get('launch');
    const opened = await timed<{ player_token: string }>(`${apiUrl}/play/open`, {}, { launch });
    if (opened.status !== 200) throw new Error(`open: ${opened.status} ${JSON.stringify(opened.body)}`);
    players.push({ token: opened.body?.player_token as string });
  }
  return players;
}

/** The bearer header of a player. */
export const bearer = (p: Player): Record<string, string> => ({ authorization: `Bearer ${p.token}` });
