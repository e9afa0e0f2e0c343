/**
 * The dead-letter tools' configuration (`npm run dead-letters`): the shared KAFKA_*, TOPIC_*
 * (dead-letter topics and the replay ledger), DATABASE_* (the wallet saga's `wallet_callbacks`, for
 * `dead-letters callbacks …`), LOG_LEVEL and SHUTDOWN_TIMEOUT_MS (lib/config/shared.ts).
 */
import { configLoader } from '../../lib/config/core.ts';
import { dbSection, kafkaSection, processSection } from '../../lib/config/shared.ts';

/** The tools' validated, frozen configuration. @throws ConfigError naming each bad or unknown setting. */
export const loadDeadLettersConfig = configLoader([kafkaSection, dbSection, processSection]);
export type DeadLettersConfig = ReturnType<typeof loadDeadLettersConfig>;
