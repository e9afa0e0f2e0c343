/**
 * The wallet saga's configuration (lib/config/core.ts).
 *
 * Its own settings (environment variable → meaning, default):
 * - WALLET_SAGA_HTTP_PORT: the /health, /ready, /metrics listener on API_HOST (8091; 0 = any).
 * - WALLET_SAGA_GROUP: consumer group of the wallet saga on wallet-transactions (wallet-saga).
 * - WALLET_SAGA_MAX_IN_FLIGHT: events admitted and not yet finished before the saga pauses its
 *   consumer (backpressure) (256).
 * - WALLET_SAGA_CACHE_MS: how long an operator's configuration row is cached (5000 ms).
 * Shared: WALLET_REPLAY_GROUP, KAFKA_*, TOPIC_*, DATABASE_*, LOG_LEVEL, SHUTDOWN_TIMEOUT_MS, API_HOST.
 */
import { z } from 'zod';
import { configLoader, int, port, section } from '../../lib/config/core.ts';
import {
  dbSection,
  deadLettersSection,
  kafkaSection,
  opsSection,
  processSection,
} from '../../lib/config/shared.ts';

export const walletSagaSection = section({
  name: 'walletSaga',
  prefixes: ['WALLET_SAGA_'],
  shape: {
    WALLET_SAGA_HTTP_PORT: port.default(8091),
    WALLET_SAGA_GROUP: z.string().min(1).default('wallet-saga'),
    WALLET_SAGA_MAX_IN_FLIGHT: int(1, 100_000).default(256),
    WALLET_SAGA_CACHE_MS: int(0, 3_600_000).default(5_000),
  },
  build: (r) => ({
    httpPort: r.WALLET_SAGA_HTTP_PORT,
    group: r.WALLET_SAGA_GROUP,
    maxInFlight: r.WALLET_SAGA_MAX_IN_FLIGHT,
    /** Operator configuration cache lifetime, ms. */
    cacheMs: r.WALLET_SAGA_CACHE_MS,
  }),
});

/** The saga's validated, frozen configuration. @throws ConfigError naming each bad or unknown setting. */
export const loadWalletSagaConfig = configLoader([
  kafkaSection,
  dbSection,
  processSection,
  opsSection,
  deadLettersSection,
  walletSagaSection,
]);
export type WalletSagaConfig = ReturnType<typeof loadWalletSagaConfig>;
