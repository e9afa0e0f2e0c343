/**
 * Simulated players: each bot is a player of the default operator. It asks
 * for a game URL like an operator platform would (POST /games/request-access with the operator's
 * bearer), opens it like a browser (POST /play/open with the one-time launch code), then bets on
 * its game every few seconds (POST /play/bets) until stopped. A session that stops working (401,
 * 410) is replaced by a new one. Bot i plays GAME_SLUGS[i % 4]; every fourth bot from the third
 * on plays a demo session (virtual balance, no callback), the others real money through the
 * wallet-saga and the operator.
 */

import { readFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { Counter, Gauge, type Registry } from 'prom-client';
import { z } from 'zod';
import { AppError } from '../../lib/errors.ts';
import type { Logger } from '../../lib/logger.ts';
import { createServiceRegistry } from '../../lib/metrics.ts';
import { GAME_SLUGS, type GameSlug } from '../../rules/games/catalog.ts';
import type { BotsConfig } from './config.ts';
import { pauseMs, planBet } from './plan.ts';

export interface BotsDeps {
  readonly config: Pick<BotsConfig, 'bots'>;
  readonly logger: Logger;
  /** [0, 1) source; Math.random in production, a seeded one in tests. */
  readonly random?: () => number;
  /** Registry of the metrics (default: a new `service="bots"` one with the process metrics). */
  readonly registry?: Registry;
}

export interface Bots {
  start(): Promise<void>;
  /** Stops every bot after its current request; resolves when all have ended. */
  stop(): Promise<void>;
  /** Counters since start. */
  readonly stats: { sessions: number; bets: number; refused: number; errors: number };
  /** True from a successful start until stop (for /ready). */
  ready(): boolean;
  /** `bots_*` counters and the bots running; served at the bots' /metrics. */
  readonly registry: Registry;
}

const operatorFile = z.object({ operator_id: z.string().min(1), api_token: z.string().min(1) });

/** A request of the bots answered with a non-2xx status; `status` is that status. */
class HttpError extends AppError {
  declare readonly code: 'BOT_REQUEST_REFUSED';

  constructor(
    readonly status: number,
    message: string,
  ) {
    super('BOT_REQUEST_REFUSED', message);
  }
}

/**
 * How long to wait after a 409 BETTING_CLOSED, ms: until its `next_round_opens_at` plus
 * 50 to 550 ms, or 500 ms when it names none (a crash flight, whose end cannot be told); undefined
 * for any other error.
 */
export function bettingClosedWait(
  err: { status: number; message: string },
  nowMs: number,
  random: () => number,
): number | undefined {
  if (err.status !== 409) return undefined;
  let body: { code?: unknown; next_round_opens_at?: unknown };
  try {
    body = JSON.parse(err.message) as typeof body;
  } catch {
    return undefined;
  }
  if (body.code !== 'BETTING_CLOSED') return undefined;
  const opens =
    typeof body.next_round_opens_at === 'string' ? Date.parse(body.next_round_opens_at) : Number.NaN;
  const jitter = 50 + Math.round(random() * 500);
  return Number.isFinite(opens) ? Math.max(0, opens - nowMs) + jitter : 500;
}

/**
 * Builds the bot fleet. `start` reads the operator file (config.bots.operatorFile).
 * @throws Error from start() when the operator file is missing or malformed.
 */
export function buildBots(deps: BotsDeps): Bots {
  const { bots } = deps.config;
  const log = deps.logger.child({ component: 'bots' });
  const random = deps.random ?? Math.random;
  const stats = { sessions: 0, bets: 0, refused: 0, errors: 0 };
  const registry = deps.registry ?? createServiceRegistry('bots');
  const registers = [registry];
  const sessionsOpened = new Counter({
    name: 'bots_sessions_opened_total',
    help: 'Game sessions the bots opened (request-access, then /play/open)',
    registers,
  });
  const betsPlaced = new Counter({ name: 'bots_bets_placed_total', help: 'Bets accepted (202)', registers });
  const failures = new Counter({
    name: 'bots_request_failures_total',
    help: 'Failed bot requests: refused (4xx) or error (5xx, timeout, connection)',
    labelNames: ['kind'] as const,
    registers,
  });
  const abort = new AbortController();
  const running: Promise<void>[] = [];
  new Gauge({
    name: 'bots_running',
    help: 'Bots currently playing',
    registers,
    collect() {
      this.set(abort.signal.aborted ? 0 : running.length);
    },
  });

  async function call<T>(path: string, token: string, body: unknown): Promise<T> {
    const res = await fetch(`${bots.apiUrl}${path}`, {
      method: 'POST',
      headers: { ...(token ? { Authorization: `Bearer ${token}` } : {}), 'Content-Type': 'application/json' },
      body: JSON.stringify(body),
      signal: AbortSignal.any([abort.signal, AbortSignal.timeout(15_000)]),
    });
    const text = await res.text();
    if (!res.ok) throw new HttpError(res.status, text.slice(0, 1000));
    return JSON.parse(text) as T;
  }

  async function session(apiToken: string, i: number, game: GameSlug): Promise<string> {
    const access = await call<{ game_url: string }>('/games/request-access', apiToken, {
      game,
      user_id: `bot-${i + 1}`,
      username: `Bot ${i + 1}`,
      currency: 'USD',
      demo: i % 4 === 2,
      expires_in_minutes: 60,
    });
    const launch = new URL(access.game_url).searchParams.get('launch');
    if (!launch) throw new Error(`game_url without a launch code: ${access.game_url}`);
    const opened = await call<{ player_token: string }>('/play/open', '', { launch });
    stats.sessions += 1;
    sessionsOpened.inc();
    return opened.player_token;
  }

  async function run(apiToken: string, i: number): Promise<void> {
    const game = GAME_SLUGS[i % GAME_SLUGS.length] ?? 'crash';
    let player: string | undefined;
    // Start staggered so the bots' bets spread over the interval.
    await sleep(Math.round(random() * bots.betIntervalMs), undefined, { signal: abort.signal }).catch(
      () => {},
    );
    while (!abort.signal.aborted) {
      let pause = pauseMs(bots.betIntervalMs, random);
      try {
        player ??= await session(apiToken, i, game);
        await call('/play/bets', player, planBet(game, random));
        stats.bets += 1;
        betsPlaced.inc();
      } catch (err) {
        if (abort.signal.aborted) break;
        const wait = err instanceof HttpError ? bettingClosedWait(err, Date.now(), random) : undefined;
        if (wait !== undefined) {
          // bets only while a round's betting window is open. Not a failure: the bot
          // comes back when the next window opens (a little after, as players do).
          pause = wait;
          await sleep(pause, undefined, { signal: abort.signal }).catch(() => {});
          continue;
        }
        if (err instanceof HttpError && (err.status === 401 || err.status === 410)) player = undefined;
        if (err instanceof HttpError && err.status < 500) {
          stats.refused += 1;
          failures.inc({ kind: 'refused' });
        } else {
          stats.errors += 1;
          failures.inc({ kind: 'error' });
        }
        log.debug({ bot: i + 1, err: (err as Error).message }, 'bot request failed');
      }
      await sleep(pause, undefined, { signal: abort.signal }).catch(() => {});
    }
  }

  let started = false;
  return {
    stats,
    registry,
    ready: () => started && !abort.signal.aborted,
    async start() {
      const op = operatorFile.parse(JSON.parse(await readFile(bots.operatorFile, 'utf8')));
      for (let i = 0; i < bots.players; i++) running.push(run(op.api_token, i));
      started = true;
      log.info({ players: bots.players, operator: op.operator_id, api: bots.apiUrl }, 'bots started');
    },
    async stop() {
      abort.abort();
      await Promise.all(running);
      log.info(stats, 'bots stopped');
    },
  };
}
