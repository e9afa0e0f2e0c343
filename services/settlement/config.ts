/**
 * The settlement processor's configuration (lib/config/core.ts).
 *
 * Its own settings: SETTLEMENT_HTTP_PORT, the /health, /ready, /metrics listener on API_HOST (8092;
 * 0 = any); SETTLEMENT_GROUP, the consumer group on wallet-transactions (settlement): every instance
 * started with the same group shares its partitions, any number of instances (docs/decisions/money/0005-settlement-scale-out.md). Each instance also reads every partition of rounds in a group
 * of its own, `<SETTLEMENT_GROUP>-rounds-<uuid>`, which commits nothing (no setting).
 * Shared: KAFKA_*, TOPIC_*, DATABASE_*, LOG_LEVEL, SHUTDOWN_TIMEOUT_MS, API_HOST (lib/config/shared.ts).
 */

import { z } from 'zod';
import { configLoader, port, section } from '../../lib/config/core.ts';
import { dbSection, kafkaSection, opsSection, processSection } from '../../lib/config/shared.ts';

export const settlementSection = section({
  name: 'settlement',
  prefixes: ['SETTLEMENT_'],
  shape: {
    SETTLEMENT_HTTP_PORT: port.default(8092),
    SETTLEMENT_GROUP: z.string().min(1).default('settlement'),
  },
  build: (r) => ({ httpPort: r.SETTLEMENT_HTTP_PORT, group: r.SETTLEMENT_GROUP }),
});

/** Settlement's validated, frozen configuration. @throws ConfigError naming each bad or unknown setting. */
export const loadSettlementConfig = configLoader([
  kafkaSection,
  dbSection,
  processSection,
  opsSection,
  settlementSection,
]);
export type SettlementConfig = ReturnType<typeof loadSettlementConfig>;
