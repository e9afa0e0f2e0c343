/**
 * The wallet saga's configuration (lib/config/core.ts).
 *
 * Its own settings (environment variable → meaning, default):
 * - WALLET_SAGA_HTTP_PORT: the /health, /ready, /metrics listener on API_HOST (8091; 0 = any).
 * - WALLET_SAGA_GROUP: consumer group of the bet processes on wallet-transactions, shared by every
 *   instance (wallet-saga).
 * - WALLET_SAGA_MAX_IN_FLIGHT: callbacks one instance holds leased at once, sent or waiting for a
 *   slot (256).
 * - WALLET_SAGA_OPERATOR_CONCURRENCY: callbacks one instance sends at once to one operator (64);
 *   of those waiting, debits, wins and rollbacks go in arrival order before round closes
 *   (send-queue.ts, rules/wallet/priority.ts).
 * - WALLET_SAGA_CACHE_MS: how long an operator's configuration row is cached (5000 ms, at most
 *   5000: the row holds the signing secrets, see `SIGNING_CACHE_MAX_MS`).
 * - WALLET_SAGA_POLL_MS: longest wait between two looks for due callbacks (200 ms).
 * - WALLET_SAGA_LEASE_MS: how long a leased callback stays with its instance before another may
 *   take it (a SIGKILLed instance's callbacks move after this) (15000 ms; longer for an operator
 *   whose timeout needs it).
 * - WALLET_SAGA_INSTANCE: this instance's name in leases (host:pid).
 * - WALLET_SAGA_BREAKER_FAILURES: consecutive failed bet callbacks that open an operator's circuit
 *   breaker (5).
 * - WALLET_SAGA_BREAKER_COOLDOWN_MS: first wait before the half-open balance probe (5000 ms),
 *   doubled after each failed probe up to WALLET_SAGA_BREAKER_MAX_COOLDOWN_MS (60000 ms).
 * - WALLET_SAGA_PULL_FORWARD: when a path of an operator that was failing answers again (or its
 *   breaker closes), its wins, rollbacks and round closes waiting for a later retry are made due
 *   at once (true); false keeps the plain retry schedule (docs/decisions/retries/0002-retries-pulled-forward.md).
 * Shared: CRYPTO_CURRENCIES (the amounts' precisions), KAFKA_*, TOPIC_*, DATABASE_*, LOG_LEVEL,
 * SHUTDOWN_TIMEOUT_MS, API_HOST.
 */
import { hostname } from 'node:os';
import { z } from 'zod';
import { bool, configLoader, int, port, section } from '../../lib/config/core.ts';
import {
  dbSection,
  kafkaSection,
  moneySection,
  opsSection,
  processSection,
} from '../../lib/config/shared.ts';

/**
 * Longest the saga caches an operator's row, ms (WALLET_SAGA_CACHE_MS's bound). The row carries the
 * signing secrets, so this bounds how long after a rotation the saga still signs with the old
 * secret alone: the operator guide ("Rotating the secret") asks operators to switch their verifier
 * no sooner than 10 s after rotating, which holds only while this stays below 10 s
 * (docs/decisions/money/0014-signing-secret-rotation-with-overlap.md).
 */
export const SIGNING_CACHE_MAX_MS = 5_000;

export const walletSagaSection = section({
  name: 'walletSaga',
  prefixes: ['WALLET_SAGA_'],
  shape: {
    WALLET_SAGA_HTTP_PORT: port.default(8091),
    WALLET_SAGA_GROUP: z.string().min(1).default('wallet-saga'),
    WALLET_SAGA_MAX_IN_FLIGHT: int(1, 100_000).default(256),
    WALLET_SAGA_OPERATOR_CONCURRENCY: int(1, 10_000).default(64),
    WALLET_SAGA_CACHE_MS: int(0, SIGNING_CACHE_MAX_MS).default(5_000),
    WALLET_SAGA_POLL_MS: int(10, 60_000).default(200),
    WALLET_SAGA_LEASE_MS: int(1_000, 600_000).default(15_000),
    WALLET_SAGA_INSTANCE: z.string().min(1).max(200).optional(),
    WALLET_SAGA_BREAKER_FAILURES: int(1, 1_000).default(5),
    WALLET_SAGA_BREAKER_COOLDOWN_MS: int(100, 3_600_000).default(5_000),
    WALLET_SAGA_BREAKER_MAX_COOLDOWN_MS: int(100, 3_600_000).default(60_000),
    WALLET_SAGA_PULL_FORWARD: bool.default(true),
  },
  build: (r) => ({
    httpPort: r.WALLET_SAGA_HTTP_PORT,
    group: r.WALLET_SAGA_GROUP,
    maxInFlight: r.WALLET_SAGA_MAX_IN_FLIGHT,
    /** Callbacks sent at once to one operator. */
    operatorConcurrency: r.WALLET_SAGA_OPERATOR_CONCURRENCY,
    /** Operator configuration cache lifetime, ms. */
    cacheMs: r.WALLET_SAGA_CACHE_MS,
    /** ms */
    pollMs: r.WALLET_SAGA_POLL_MS,
    /** ms */
    leaseMs: r.WALLET_SAGA_LEASE_MS,
    instance: r.WALLET_SAGA_INSTANCE ?? `${hostname()}:${process.pid}`,
    /** Retries pulled forward when their operator answers again. */
    pullForward: r.WALLET_SAGA_PULL_FORWARD,
    breaker: {
      failures: r.WALLET_SAGA_BREAKER_FAILURES,
      cooldownMs: r.WALLET_SAGA_BREAKER_COOLDOWN_MS,
      maxCooldownMs: Math.max(r.WALLET_SAGA_BREAKER_MAX_COOLDOWN_MS, r.WALLET_SAGA_BREAKER_COOLDOWN_MS),
    },
  }),
});

/** The saga's validated, frozen configuration. @throws ConfigError naming each bad or unknown setting. */
export const loadWalletSagaConfig = configLoader([
  kafkaSection,
  dbSection,
  processSection,
  opsSection,
  moneySection,
  walletSagaSection,
]);
export type WalletSagaConfig = ReturnType<typeof loadWalletSagaConfig>;
