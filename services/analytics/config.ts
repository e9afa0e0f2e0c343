/**
 * The analytics CLI's configuration (`npm run analytics`): the shared KAFKA_*, TOPIC_*, LOG_LEVEL and
 * SHUTDOWN_TIMEOUT_MS (lib/config/shared.ts).
 */
import { configLoader } from '../../lib/config/core.ts';
import { kafkaSection, processSection } from '../../lib/config/shared.ts';

/** The CLI's validated, frozen configuration. @throws ConfigError naming each bad or unknown setting. */
export const loadAnalyticsConfig = configLoader([kafkaSection, processSection]);
export type AnalyticsConfig = ReturnType<typeof loadAnalyticsConfig>;
