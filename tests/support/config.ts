/**
 * Every section of every service in one configuration, for tests and benchmarks that run several
 * services in one process (each service itself loads only its own sections: services/<name>/config.ts).
 * An unknown setting under any service's prefix is an error here too.
 */
import { configLoader } from '../../lib/config/core.ts';
import {
  authSection,
  dbSection,
  edgeSection,
  failureBudgetSection,
  gamesSection,
  kafkaSection,
  moneySection,
  opsSection,
  processSection,
} from '../../lib/config/shared.ts';
import { streamSection } from '../../lib/stream/config.ts';
import { accessSection, apiSection, opsConsoleSection } from '../../services/api/config.ts';
import { botsSection } from '../../services/bots/config.ts';
import { grpcSection } from '../../services/edge/config.ts';
import { wtSection } from '../../services/edge-webtransport/settings.ts';
import { gatewaySection } from '../../services/gateway/config.ts';
import { sandboxSection } from '../../services/operator-sandbox/config.ts';
import { projectorSection } from '../../services/projector/config.ts';
import { engineSection } from '../../services/round-engine/config.ts';
import { settlementSection } from '../../services/settlement/config.ts';
import { walletSagaSection } from '../../services/wallet-saga/config.ts';

/** Loads every section (see lib/config/core.ts `loadSections`). @throws ConfigError naming each bad setting. */
export const loadConfig = configLoader([
  kafkaSection,
  dbSection,
  processSection,
  opsSection,
  authSection,
  edgeSection,
  moneySection,
  apiSection,
  accessSection,
  botsSection,
  grpcSection,
  wtSection,
  gatewaySection,
  sandboxSection,
  projectorSection,
  engineSection,
  settlementSection,
  walletSagaSection,
  streamSection,
  gamesSection,
  failureBudgetSection,
  opsConsoleSection,
]);

/** The configuration of every service. */
export type Config = ReturnType<typeof loadConfig>;
