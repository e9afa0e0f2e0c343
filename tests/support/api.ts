/**
 * Test support for the API's integration tests (not a test file): an app on a real Postgres in
 * a schema of its own, and read-model fixture rows written directly, as the projector would.
 */
import { randomBytes } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { migrate } from '../../lib/db/migrate.ts';
import { createSql, type Sql } from '../../lib/db/pool.ts';
import { createLogger, type Logger } from '../../lib/logger.ts';
import { type GameSlug, gameBySlug } from '../../rules/games/catalog.ts';
import { buildApi } from '../../services/api/app.ts';
import type { RoundsWindow } from '../../services/api/rounds/window.ts';
import { type Config, loadConfig } from './config.ts';

export interface TestApi {
  readonly app: FastifyInstance;
  readonly sql: Sql;
  readonly config: Config;
  /** Closes the app, drops the schema (when `migrated`) and ends the pool. */
  close(): Promise<void>;
}

/**
 * Builds the API against `t_api_<random>` with the migrations applied, unless `migrated` is
 * false (for a database that cannot be reached). `overrides` are settings (environment variable names) of tests/support/config.ts; `logger`
 * replaces the silent one (tests that check log lines).
 */
export async function startTestApi(
  overrides: Record<string, string | number> = {},
  options: { migrated?: boolean; readyTimeoutMs?: number; logger?: Logger; roundsWindow?: RoundsWindow } = {},
): Promise<TestApi> {
  const schema = `t_api_${randomBytes(4).toString('hex')}`;
  const config = loadConfig(process.env, { DATABASE_SCHEMA: schema, LOG_LEVEL: 'silent', ...overrides });
  const sql = createSql(config, { max: 3 });
  const migrated = options.migrated ?? true;
  if (migrated) await migrate(sql, schema);
  const app = await buildApi({
    config,
    sql,
    logger: options.logger ?? createLogger('api-test', config.process.logLevel),
    ...(options.readyTimeoutMs === undefined ? {} : { readyTimeoutMs: options.readyTimeoutMs }),
    ...(options.roundsWindow ? { roundsWindow: options.roundsWindow } : {}),
  });
  return {
    app,
    sql,
    config,
    async close() {
      await app.close();
      if (migrated) await sql.unsafe(`drop schema if exists "${schema}" cascade`);
      await sql.end({ timeout: 5 });
    },
  };
}

export interface RoundFixture {
  readonly game: GameSlug;
  /** Sequence within the game; round_id = game_id × 10^12 + seq (docs/decisions/log-and-topics/0004-round-ids.md). */
  readonly seq: number;
  /** Unix ms. */
  readonly finishedAt: number;
  readonly value: string;
  readonly extras: Record<string, unknown>;
  /** Unix ms; defaults to finishedAt + 5. */
  readonly appendedAt?: number;
}

/** The round id the projector stores for `seq` of `game`. */
export function roundId(game: GameSlug, seq: number): number {
  return (gameBySlug(game)?.id ?? 0) * 1e12 + seq;
}

/** Inserts rounds into `rounds` and moves `games.last_round`/`last_update` as the projector does. */
export async function insertRounds(sql: Sql, rounds: readonly RoundFixture[]): Promise<void> {
  for (const r of rounds) {
    const g = gameBySlug(r.game);
    if (!g) throw new Error(`unknown game ${r.game}`);
    const id = roundId(r.game, r.seq);
    const finished = new Date(r.finishedAt);
    await sql`
      insert into rounds (game_id, round_id, game_slug, game_type, finished_at, value, extras, proof, appended_at)
      values (${g.id}, ${id}, ${g.slug}, ${g.type}, ${finished}, ${r.value},
              ${sql.json(r.extras as never)}, null, ${new Date(r.appendedAt ?? r.finishedAt + 5)})`;
    await sql`
      update games set last_round = ${id}, last_update = ${finished}
      where id = ${g.id} and (last_round is null or last_round < ${id})`;
  }
}
