/**
 * The one place this Deno service reads its environment. The settings and their validation are
 * those of lib/config.ts (the same names as every Node service: KAFKA_BROKERS, TOPIC_NAMESPACE,
 * WT_HOST, WT_PORT, WT_HTTP_PORT, WT_CERT_FILE, WT_KEY_FILE, WT_DEV_CERT_DIR, WT_MAX_SESSIONS,
 * WT_HANDSHAKE_TIMEOUT_MS, EDGE_DRAIN_MS, LOG_LEVEL); only the source differs: `Deno.env`
 * instead of `process.env`.
 */
import { type Config, loadConfig } from '../../lib/config.ts';

/**
 * Validated, frozen configuration from the process environment.
 * @throws ConfigError naming every malformed setting.
 */
export function loadWtConfig(): Config {
  return loadConfig(Deno.env.toObject());
}
