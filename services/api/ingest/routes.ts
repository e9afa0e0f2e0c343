/**
 * The publisher API of external game servers (docs/threat-model.md "One writer per game"):
 *
 * - POST /api/rounds/open: opens the game's next round (RoundOpened with the server's commitment,
 *   the betting window timed by this process's clock); betting closes by the platform's clock
 *   (a timer here appends BettingClosed at the announced close; a finish appends it first if no
 *   BettingClosed reached the log, e.g. after a restart);
 * - POST /api/rounds: finishes the open round with its result and revealed seed (RoundFinished with
 *   the proof), checked by rules/rounds/publishing.ts against the game's lifecycle as read from the
 *   `rounds` topic (lib/log/round-phases.ts), never from a read model.
 *
 * Both need a key bound to the game (scope `publish:rounds:<game>`; admin keys hold no binding) and
 * a game declared external (GAMES_EXTERNAL); the round engine's games are refused to every key
 * (403 naming the game). Nothing refused is appended. Records go to `rounds` keyed by the game slug,
 * with acks from all in-sync replicas.
 *
 * A repeated finish (a retry after a lost answer) is recognised from the rounds read model, or, before
 * the projector has caught up, from this process's memory of the last 10000 rounds it finished: the same
 * round again → 200 `duplicate: true`, other data under its id → 409. Requests of one game run one at
 * a time in this process; one game has one server, so two API nodes racing on one game is that
 * server's own race (the log keeps the first RoundOpened; readers skip the repeat).
 */
import { isDeepStrictEqual } from 'node:util';
import type { FastifyPluginAsync } from 'fastify';
import type { Producer } from 'kafkajs';
import { publishGamesOf } from '../../../lib/auth/scopes.ts';
import type { Sql } from '../../../lib/db/pool.ts';
import type { RoundPhases } from '../../../lib/log/round-phases.ts';
import { encodeRoundEvent } from '../../../lib/log/rounds-codec.ts';
import { topicName } from '../../../lib/log/topics.ts';
import type { Logger } from '../../../lib/logger.ts';
import { type GameInfo, type GameSlug, gameBySlug, gameSource } from '../../../rules/games/catalog.ts';
import type { Phase } from '../../../rules/rounds/lifecycle.ts';
import { decideFinish, decideOpen, dueClose, type Refusal } from '../../../rules/rounds/publishing.ts';
import { extrasOf, type RoundEvent, type RoundFinished, roundValue } from '../../../rules/rounds/round.ts';
import type { ApiConfig } from '../config.ts';
import { AuthError, ConflictError, InvalidInputError } from '../errors.ts';
import { parseRoundPost } from './input.ts';
import { openRoundBody, postRoundBody } from './schema.ts';

const RECENT_MAX = 10_000;
/** How long an answer waits for this process's view of the log to show what it appended, ms. */
const VISIBLE_WAIT_MS = 5000;

const err = (description: string) => ({ $ref: 'ErrorBody#', description }) as const;
const refusals = {
  400: err('Invalid request: the field and rule are named (finished_at skew, seed, result).'),
  401: err('Missing or invalid credential.'),
  403: err('The key is not bound to this game (publish:rounds:<game>), or the round engine writes it.'),
  409: err(
    "The request contradicts the game's lifecycle on the log (not the next round, a round still open, betting still open), or another round is recorded under this id.",
  ),
};
const postRoundSchema = {
  tags: ['rounds'],
  summary:
    'Finish the open round of an external game with its result and revealed seed (publish:rounds:<game>).',
  body: postRoundBody,
  response: {
    200: {
      type: 'object',
      description: 'Already recorded with the same data; nothing appended.',
      properties: { success: { type: 'boolean' }, duplicate: { type: 'boolean', enum: [true] } },
    },
    201: {
      type: 'object',
      properties: { success: { type: 'boolean' }, duplicate: { type: 'boolean', enum: [false] } },
    },
    ...refusals,
  },
} as const;
const openRoundSchema = {
  tags: ['rounds'],
  summary: 'Open the next round of an external game with a commitment to its result (publish:rounds:<game>).',
  body: openRoundBody,
  response: {
    201: {
      type: 'object',
      required: ['success', 'round_id', 'betting_opens_at', 'betting_closes_at'],
      properties: {
        success: { type: 'boolean' },
        round_id: { type: 'integer' },
        betting_opens_at: { type: 'string', format: 'date-time' },
        betting_closes_at: { type: 'string', format: 'date-time' },
      },
    },
    ...refusals,
  },
} as const;

/** The comparable content of a finished round. */
function fingerprint(r: RoundFinished, seed: string) {
  return { finished_at: r.finished_at, value: roundValue(r.result), extras: extrasOf(r.result), seed };
}

/** A refusal of rules/rounds/publishing.ts as the API's error. */
function refusalError(r: Refusal): Error {
  return r.status === 409 ? new ConflictError(r.code, r.message) : new InvalidInputError(r.code, r.message);
}

export interface IngestDeps {
  readonly config: Pick<ApiConfig, 'kafka' | 'games'>;
  readonly sql: Sql;
  readonly producer: Producer;
  /** Each game's phase as read from the `rounds` topic. */
  readonly phases: RoundPhases;
  readonly logger: Logger;
  /** Unix ms (default Date.now). */
  readonly now?: () => number;
  /** Largest distance of a posted finished_at from `now`, ms. */
  readonly skewMs: number;
}

export function ingestRoutes(deps: IngestDeps): FastifyPluginAsync {
  const { phases, producer } = deps;
  const now = deps.now ?? Date.now;
  const topic = topicName(deps.config, 'rounds');
  const log = deps.logger.child({ component: 'publisher-api' });
  const recent = new Map<string, ReturnType<typeof fingerprint>>();
  const timers = new Set<NodeJS.Timeout>();
  const queues = new Map<GameSlug, Promise<unknown>>();

  /** Runs `f` after the previous request of `game` in this process. */
  const serial = <T>(game: GameSlug, f: () => Promise<T>): Promise<T> => {
    const run = (queues.get(game) ?? Promise.resolve()).then(f, f);
    queues.set(
      game,
      run.catch(() => {}),
    );
    return run;
  };

  const append = async (events: readonly RoundEvent[]) => {
    await producer.send({
      topic,
      acks: -1,
      messages: events.map((e) => ({ key: e.game_slug, value: encodeRoundEvent(e) })),
    });
  };

  /** Waits until this process's view of the log satisfies `seen` (read-your-write), at most VISIBLE_WAIT_MS. */
  const visible = async (game: GameSlug, seen: (p: Phase | undefined) => boolean) => {
    const until = Date.now() + VISIBLE_WAIT_MS;
    while (!seen(phases.phase(game))) {
      if (Date.now() >= until) {
        log.warn({ game }, 'appended, but not yet seen on the log after 5 s');
        return;
      }
      await new Promise((r) => setTimeout(r, 5));
    }
  };

  /** Appends the BettingClosed of `game`'s open round when its window has ended and none is on the log. */
  const closeIfDue = (game: GameSlug) =>
    serial(game, async () => {
      const close = dueClose(phases.phase(game), now());
      if (!close) return;
      await append([close]);
      await visible(game, (p) => p?.phase !== 'betting');
    });

  /** The game of the body, once the caller may write it. @throws AuthError 403 naming the game */
  const writableGame = (slug: string, scopes: readonly string[]): GameInfo => {
    const game = gameBySlug(slug) as GameInfo;
    if (gameSource(game.slug, deps.config.games.external) === 'engine')
      throw new AuthError(
        403,
        'game',
        'Forbidden',
        `the round engine writes the rounds of ${game.slug}; no key may publish them`,
      );
    if (!publishGamesOf(scopes).includes(game.slug))
      throw new AuthError(
        403,
        'game',
        'Forbidden',
        `this key is not bound to ${game.slug} (scope publish:rounds:${game.slug})`,
      );
    return game;
  };

  const stored = async (r: RoundFinished) => {
    const mem = recent.get(`${r.game_id}:${r.round_id}`);
    if (mem) return mem;
    const rows = await deps.sql<{ value: string; extras: string; finished_at: Date; proof: string | null }[]>`
      select value, extras::text as extras, finished_at, proof->>'hash' as proof from rounds
      where game_id = ${r.game_id} and round_id = ${r.round_id}`;
    const row = rows[0];
    return (
      row && {
        finished_at: row.finished_at.getTime(),
        value: row.value,
        extras: JSON.parse(row.extras),
        seed: row.proof ?? '',
      }
    );
  };

  return async (app) => {
    app.addHook('onClose', async () => {
      for (const t of timers) clearTimeout(t);
      timers.clear();
    });

    app.post<{ Body: { game_slug: string; round_id: number; betting_ms: number; commitment: string } }>(
      '/api/rounds/open',
      { schema: openRoundSchema },
      async (req, reply) => {
        const game = writableGame(req.body.game_slug, req.principal?.scopes ?? []);
        const opened = await serial(game.slug, async () => {
          const at = now();
          const d = decideOpen(game, phases.phase(game.slug), req.body, at);
          if (!d.ok) throw refusalError(d.refusal);
          await append([d.value]);
          await visible(
            game.slug,
            (p) => p !== undefined && p.phase !== 'finished' && p.opened.round_id === d.value.round_id,
          );
          return d.value;
        });
        const t = setTimeout(
          () => {
            timers.delete(t);
            closeIfDue(game.slug).catch((e) =>
              log.error({ err: e, game: game.slug }, 'closing betting failed'),
            );
          },
          Math.max(0, opened.betting_closes_at - now()),
        );
        t.unref();
        timers.add(t);
        return reply.code(201).send({
          success: true,
          round_id: opened.round_id,
          betting_opens_at: new Date(opened.betting_opens_at).toISOString(),
          betting_closes_at: new Date(opened.betting_closes_at).toISOString(),
        });
      },
    );

    // The schema (schema.ts) is enforced by the app's strict ajv; input.ts converts the body.
    app.post('/api/rounds', { schema: postRoundSchema }, async (req, reply) => {
      const parsed = parseRoundPost(req.body);
      if (!parsed.ok) throw new InvalidInputError('INVALID_ROUND', parsed.error);
      const { round, seed } = parsed.value;
      const game = writableGame(round.game_slug, req.principal?.scopes ?? []);
      const fp = fingerprint(round, seed);
      const key = `${round.game_id}:${round.round_id}`;
      const appended = await serial(game.slug, async () => {
        const prior = await stored(round);
        if (prior) {
          if (!isDeepStrictEqual(prior, fp))
            throw new ConflictError(
              'ROUND_CONFLICT',
              `round ${round.round_id} of ${round.game_slug} is already recorded with other data`,
            );
          return false;
        }
        const d = decideFinish(game, phases.phase(game.slug), { ...round, seed }, now(), deps.skewMs);
        if (!d.ok) throw refusalError(d.refusal);
        await append(d.value);
        recent.set(key, fp);
        if (recent.size > RECENT_MAX) recent.delete(recent.keys().next().value as string);
        await visible(game.slug, (p) => p?.phase === 'finished' && p.roundId >= round.round_id);
        return true;
      });
      return appended
        ? reply.code(201).send({ success: true, duplicate: false })
        : reply.code(200).send({ success: true, duplicate: true });
    });
  };
}
