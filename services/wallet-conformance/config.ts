/**
 * The conformance kit's configuration (`npm run wallet:conformance`): the shared DATABASE_* (to read
 * an operator's row with --operator), CRYPTO_CURRENCIES (the currency table), LOG_LEVEL and
 * SHUTDOWN_TIMEOUT_MS (lib/config/shared.ts). Everything about the operator under test comes from
 * its row or from the command line.
 */
import { configLoader } from '../../lib/config/core.ts';
import { dbSection, moneySection, processSection } from '../../lib/config/shared.ts';

/** The kit's validated, frozen configuration. @throws ConfigError naming each bad or unknown setting. */
export const loadConformanceConfig = configLoader([dbSection, moneySection, processSection]);
export type ConformanceConfig = ReturnType<typeof loadConformanceConfig>;
