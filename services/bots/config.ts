/**
 * The bots' configuration (lib/config/core.ts).
 *
 * Its own settings (environment variable → meaning, default):
 * - BOTS_PLAYERS: simulated players (0 = none; `npm start` runs 6).
 * - BOTS_API_URL: where the bots reach the API (http://API_HOST:API_PORT).
 * - BOTS_OPERATOR_FILE: the default operator's credentials written by scripts/register-sandbox.ts
 *   (.data/sandbox/operator.json).
 * - BOTS_BET_INTERVAL_MS: mean pause between one bot's bets (4000 ms; each pause is 0.5x to 1.5x).
 * - BOTS_HTTP_PORT: the bots' /health, /ready, /metrics listener on API_HOST (8093; 0 = any free port).
 * Shared: LOG_LEVEL, SHUTDOWN_TIMEOUT_MS, API_HOST (lib/config/shared.ts).
 */
import {
  configLoader,
  dataPath,
  host,
  int,
  localOrigin,
  originUrl,
  port,
  section,
} from '../../lib/config/core.ts';
import { opsSection, processSection } from '../../lib/config/shared.ts';

export const botsSection = section({
  name: 'bots',
  prefixes: ['BOTS_'],
  shape: {
    BOTS_PLAYERS: int(0, 1000).default(0),
    BOTS_API_URL: originUrl.optional(),
    BOTS_OPERATOR_FILE: dataPath('sandbox', 'operator.json'),
    BOTS_BET_INTERVAL_MS: int(100, 600_000).default(4_000),
    BOTS_HTTP_PORT: port.default(8093),
    // The API's listener, read for the default BOTS_API_URL only.
    API_HOST: host.default('127.0.0.1'),
    API_PORT: port.default(8085),
  },
  build: (r) => ({
    players: r.BOTS_PLAYERS,
    /** API origin without a trailing slash. */
    apiUrl: (r.BOTS_API_URL ?? localOrigin(r.API_HOST, r.API_PORT)).replace(/\/$/, ''),
    /** JSON file {operator_id, api_token} of the operator the bots play through. */
    operatorFile: r.BOTS_OPERATOR_FILE,
    /** Mean pause between one bot's bets, ms. */
    betIntervalMs: r.BOTS_BET_INTERVAL_MS,
    /** /health, /ready, /metrics listener (on API_HOST). */
    httpPort: r.BOTS_HTTP_PORT,
  }),
});

/** The bots' validated, frozen configuration. @throws ConfigError naming each bad or unknown setting. */
export const loadBotsConfig = configLoader([processSection, opsSection, botsSection]);
export type BotsConfig = ReturnType<typeof loadBotsConfig>;
