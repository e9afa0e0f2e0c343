/**
 * pino root logger with one child per component (STYLE.md §12). Secrets that may pass through
 * request logs (API keys, tokens, authorization headers, seeds) are redacted.
 */
import { type Logger, pino } from 'pino';

export type { Logger };

const REDACT = [
  'req.headers.authorization',
  'req.headers["x-api-key"]',
  'req.query.api_key',
  'req.query.token',
  '*.serverSeed',
  '*.secret',
];

/** Root logger of a process; `service` names the deployable (api, projector, round-engine, …). */
export function createLogger(service: string, level: string = 'info'): Logger {
  return pino({ level, base: { service }, redact: { paths: REDACT, censor: '[redacted]' } });
}
