/**
 * Graceful shutdown of a process (STYLE.md §1: each main.ts registers it): the first SIGINT or
 * SIGTERM runs `stop` once, then the process exits 0, or 1 when `stop` throws. Later signals
 * while stopping are ignored, so a second Ctrl-C does not cut a drain short.
 */
import type { Logger } from './logger.ts';

/** Registers `stop` for SIGINT and SIGTERM; `fields` are added to the "shutting down" log line. */
export function onShutdown(
  logger: Logger,
  stop: () => Promise<void>,
  fields: Record<string, unknown> = {},
): void {
  let stopping = false;
  const handle = async (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal, ...fields }, 'shutting down');
    try {
      await stop();
      process.exit(0);
    } catch (err) {
      logger.error({ err }, 'unclean shutdown');
      process.exit(1);
    }
  };
  process.on('SIGINT', (s) => void handle(s));
  process.on('SIGTERM', (s) => void handle(s));
}
