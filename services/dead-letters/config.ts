/**
 * The dead-letter tools' configuration (`npm run dead-letters`, `npm run wallet:replay`): the shared
 * KAFKA_*, TOPIC_*, LOG_LEVEL, SHUTDOWN_TIMEOUT_MS and WALLET_REPLAY_GROUP (lib/config/shared.ts).
 */
import { configLoader } from '../../lib/config/core.ts';
import { deadLettersSection, kafkaSection, processSection } from '../../lib/config/shared.ts';

/** The tools' validated, frozen configuration. @throws ConfigError naming each bad or unknown setting. */
export const loadDeadLettersConfig = configLoader([kafkaSection, processSection, deadLettersSection]);
export type DeadLettersConfig = ReturnType<typeof loadDeadLettersConfig>;
