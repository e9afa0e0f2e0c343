/**
 * The round engine's configuration (lib/config/core.ts).
 *
 * Its own settings (environment variable → meaning, default):
 * - ROUND_SPEED: round cadence factor, 2 = twice as fast (1).
 * - ROUND_GAMES: comma-separated slugs the round engine runs (every game not in GAMES_EXTERNAL). Naming a
 *   game of GAMES_EXTERNAL is an error: each game has one writer (docs/threat-model.md).
 * - ROUND_SERVER_SEED: 64 hex chars, the secret from which every hash chain derives; when empty
 *   the engine creates one in ROUND_SEED_FILE at first start.
 * - ROUND_SEED_FILE: where a generated server seed is kept (.data/round-engine/server-seed).
 * - ROUND_CHAIN_LENGTH: rounds per hash chain before a new epoch starts (100000).
 * - ROUND_ENGINE_PORT: the engine's HTTP port on API_HOST: health, fairness, and the internal cash-out
 *   decision the API calls, signed with the token secret (8081; 0 = any free port).
 * - ROUND_BETTING_MS: betting windows per game in ms at speed 1, `game=ms` pairs separated by commas
 *   (e.g. `crash=5000,double=12000`); games not named keep their defaults (crash 7000, double 10000,
 *   slot 3000, wall-street 6000; rules/games). Divided by ROUND_SPEED like every duration.
 * Shared: KAFKA_*, TOPIC_*, GAMES_EXTERNAL, LOG_LEVEL, SHUTDOWN_TIMEOUT_MS, API_HOST, AUTH_TOKEN_SECRET(_FILE) (lib/config/shared.ts).
 */

import { z } from 'zod';
import { configLoader, dataPath, int, port, section } from '../../lib/config/core.ts';
import {
  authSection,
  externalGamesSetting,
  kafkaSection,
  opsSection,
  processSection,
} from '../../lib/config/shared.ts';
import { ConfigError } from '../../lib/errors.ts';
import { GAME_SLUGS, type GameSlug } from '../../rules/games/catalog.ts';

export const engineSection = section({
  name: 'engine',
  prefixes: ['ROUND_'],
  shape: {
    ROUND_SPEED: z.coerce.number().positive().max(1000).default(1),
    ROUND_GAMES: z
      .string()
      .transform((s) => s.split(',').map((p) => p.trim()))
      .pipe(z.array(z.enum(GAME_SLUGS)).min(1))
      .optional(),
    GAMES_EXTERNAL: externalGamesSetting,
    ROUND_SERVER_SEED: z
      .string()
      .regex(/^([0-9a-f]{64})?$/, '64 lower-case hex characters')
      .default(''),
    ROUND_SEED_FILE: dataPath('round-engine', 'server-seed'),
    ROUND_CHAIN_LENGTH: int(10, 10_000_000).default(100_000),
    ROUND_ENGINE_PORT: port.default(8081),
    ROUND_BETTING_MS: z
      .string()
      .regex(/^[a-z-]+=\d+(,[a-z-]+=\d+)*$/, 'game=ms pairs separated by commas')
      .transform((s) =>
        Object.fromEntries(
          s
            .split(',')
            .map((p) => p.split('='))
            .map(([g, ms]) => [g, Number(ms)]),
        ),
      )
      .pipe(z.partialRecord(z.enum(GAME_SLUGS), z.number().int().min(100).max(600_000)))
      .default({}),
  },
  build: (r) => ({
    speed: r.ROUND_SPEED,
    games: engineGames(r.ROUND_GAMES, r.GAMES_EXTERNAL),
    serverSeed: r.ROUND_SERVER_SEED,
    seedFile: r.ROUND_SEED_FILE,
    chainLength: r.ROUND_CHAIN_LENGTH,
    port: r.ROUND_ENGINE_PORT,
    /** Betting windows (ms at speed 1) of the games configured by ROUND_BETTING_MS. */
    bettingMs: r.ROUND_BETTING_MS as Readonly<Partial<Record<(typeof GAME_SLUGS)[number], number>>>,
  }),
});

/**
 * The games the engine runs: ROUND_GAMES when set, else every game not published externally.
 * @throws ConfigError when ROUND_GAMES names a game of GAMES_EXTERNAL (two writers for one game).
 */
function engineGames(
  named: readonly GameSlug[] | undefined,
  external: readonly GameSlug[],
): readonly GameSlug[] {
  const taken = (named ?? []).filter((g) => external.includes(g));
  if (taken.length > 0)
    throw new ConfigError(
      `ROUND_GAMES: ${taken.join(', ')} published by an external game server (GAMES_EXTERNAL); each game has one writer`,
    );
  const games = named ?? GAME_SLUGS.filter((g) => !external.includes(g));
  if (games.length === 0)
    throw new ConfigError('ROUND_GAMES: every game is external (GAMES_EXTERNAL); nothing to run');
  return games;
}

/** The engine's validated, frozen configuration. @throws ConfigError naming each bad or unknown setting. */
export const loadEngineConfig = configLoader([
  kafkaSection,
  processSection,
  opsSection,
  authSection,
  engineSection,
]);
export type EngineConfig = ReturnType<typeof loadEngineConfig>;
