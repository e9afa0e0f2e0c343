/**
 * pino root logger with one child per component (docs/conventions.md §12). Secrets that may pass through
 * request logs (API keys, tokens, authorization headers, seeds) are redacted.
 */
import { type DestinationStream, type Logger, pino } from 'pino';

export type { Logger };

const REDACT = [
  'req.headers.authorization',
  'req.headers["x-api-key"]',
  'req.query.api_key',
  'req.query.token',
  'headers.authorization',
  'headers["x-api-key"]',
  'headers["sec-websocket-protocol"]',
  'req.headers["sec-websocket-protocol"]',
  '*.serverSeed',
  '*.secret',
];

/**
 * Root logger of a process; `service` names the deployable (api, projector, round-engine, …).
 * @param destination where lines go (default stdout); tests pass a capture stream.
 */
export function createLogger(
  service: string,
  level: string = 'info',
  destination?: DestinationStream,
): Logger {
  const options = { level, base: { service }, redact: { paths: REDACT, censor: '[redacted]' } };
  return destination ? pino(options, destination) : pino(options);
}

/**
 * `url` with the values of credential query parameters (`api_key`, `token`; docs/contract.md
 * "Authentication" 4) replaced by `[redacted]`, for request lines that log the URL.
 */
export function redactUrl(url: string): string {
  return url.replace(/([?&](?:api_key|token)=)[^&#]*/gi, '$1[redacted]');
}
