/**
 * The projector process's configuration (lib/config/core.ts).
 *
 * Its own settings: PROJECTOR_PORT, the /health, /ready, /metrics listener on API_HOST (8082; 0 = any
 * free port); PROJECTOR_GROUP, the consumer group of the rounds projection (projector-rounds; the
 * wallet projection uses `<group>-wallet`, auth-keys a fresh `<group>-auth-keys-<uuid>` per start).
 * Shared: KAFKA_*, TOPIC_*, DATABASE_*, LOG_LEVEL, SHUTDOWN_TIMEOUT_MS, API_HOST, CRYPTO_CURRENCIES
 * (lib/config/shared.ts; the wallet projection formats demo balances in each currency's precision).
 */

import { z } from 'zod';
import { configLoader, port, section } from '../../lib/config/core.ts';
import {
  dbSection,
  kafkaSection,
  moneySection,
  opsSection,
  processSection,
} from '../../lib/config/shared.ts';

export const projectorSection = section({
  name: 'projector',
  prefixes: ['PROJECTOR_'],
  shape: {
    PROJECTOR_PORT: port.default(8082),
    PROJECTOR_GROUP: z.string().min(1).default('projector-rounds'),
  },
  build: (r) => ({ group: r.PROJECTOR_GROUP, port: r.PROJECTOR_PORT }),
});

/** The projector's validated, frozen configuration. @throws ConfigError naming each bad or unknown setting. */
export const loadProjectorConfig = configLoader([
  kafkaSection,
  dbSection,
  processSection,
  opsSection,
  moneySection,
  projectorSection,
]);
export type ProjectorConfig = ReturnType<typeof loadProjectorConfig>;
