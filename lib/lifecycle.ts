/**
 * Graceful shutdown of a process (docs/conventions.md §1: each main.ts registers it): the first SIGINT or
 * SIGTERM runs `stop` once, then the process exits 0, or 1 when `stop` throws or does not finish
 * within `timeoutMs` (SHUTDOWN_TIMEOUT_MS, lib/config/shared.ts). Later signals while stopping are
 * ignored, so a second Ctrl-C does not cut a drain short; the bound is what ends a stop that hangs
 * (a broker or database that does not answer), so a supervisor never waits for ever and the exit
 * code says the stop was not clean.
 *
 * A main calls `holdSignals` first and `onShutdown` once its service has started: a signal that
 * arrives during start-up is held and the stop runs as soon as `onShutdown` registers it, so a
 * start-up is never cut off half-way (a consumer that has just written its first batch is stopped
 * like any other), and the same bound applies from the moment the signal arrived. A signal that came
 * even earlier, while the main's modules were still loading, is held by lib/early-signals.ts when the
 * process preloads it (`--import`, as `npm start` does) and taken over here.
 *
 * What `stop` must do, in this order (README "Operations"): stop accepting new work (listeners,
 * consumers), finish or abandon the work in flight so nothing is half-written, commit consumer
 * positions, then close producers and pools.
 */
import type { Logger } from './logger.ts';

/** Used when a caller gives no bound, ms (the default of SHUTDOWN_TIMEOUT_MS). */
const DEFAULT_SHUTDOWN_TIMEOUT_MS = 30_000;

export interface ShutdownOptions {
  /** Longest `stop` may take, ms; past it the process exits 1. */
  readonly timeoutMs?: number;
  /** Added to the "shutting down" log line (e.g. the drain window). */
  readonly fields?: Record<string, unknown>;
  /** Ends the process; `process.exit` unless a test replaces it. */
  readonly exit?: (code: number) => void;
}

type Handler = (signal: NodeJS.Signals) => Promise<void>;

/** A signal received before a stop was registered; `at` is Unix ms. */
export interface HeldSignal {
  readonly signal: NodeJS.Signals;
  readonly at: number;
}

/**
 * The global slot (`globalThis[EARLY_SIGNALS]`) where lib/early-signals.ts, preloaded before the
 * main's modules load, leaves what `listen` takes over.
 */
export const EARLY_SIGNALS = Symbol.for('casino.early-signals');

/** What lib/early-signals.ts puts in the slot. */
export interface EarlySignals {
  /** Removes the preload's listeners and its bound; returns the signal it held, if one came. */
  takeOver(): HeldSignal | undefined;
}

/** `globalThis` seen with its slot, for lib/early-signals.ts to fill and `listen` to read. */
export const earlySignalsSlot = globalThis as { [EARLY_SIGNALS]?: EarlySignals };

let handler: Handler | undefined;
let held: HeldSignal | undefined;
let listening = false;

function listen(): void {
  if (listening) return;
  listening = true;
  for (const name of ['SIGINT', 'SIGTERM'] as const)
    process.on(name, (signal) => {
      if (handler) void handler(signal);
      else held ??= { signal, at: Date.now() };
    });
  // Ours listen first, then the preload's go: no moment without a listener.
  const before = earlySignalsSlot[EARLY_SIGNALS]?.takeOver();
  if (before) held ??= before;
}

/**
 * Holds SIGINT/SIGTERM until `onShutdown` registers the stop (call it first thing in a main). A
 * start-up that has not reached `onShutdown` `timeoutMs` ms after the signal (it hangs, or failed
 * and is still cleaning up) ends the process with 1; for a signal the preload held while the modules
 * were loading, the bound counts from that signal.
 */
export function holdSignals(logger: Logger, timeoutMs = DEFAULT_SHUTDOWN_TIMEOUT_MS): void {
  listen();
  const whenHeld = ({ signal, at }: HeldSignal) => {
    if (handler) return;
    logger.info({ signal, msAgo: Date.now() - at }, 'signal during start-up; stopping once started');
    setTimeout(
      () => {
        if (handler) return;
        logger.error({ timeoutMs }, 'start-up did not finish in time after the signal; exiting');
        process.exit(1);
      },
      Math.max(0, at + timeoutMs - Date.now()),
    ).unref();
  };
  if (held) whenHeld(held);
  else
    for (const name of ['SIGINT', 'SIGTERM'] as const)
      process.once(name, (signal) => whenHeld({ signal, at: Date.now() }));
}

/**
 * Registers `stop` for SIGINT and SIGTERM, and runs it at once when a signal was held since
 * `holdSignals` (its bound then counts from the signal).
 * @returns the handler, which tests may call directly with a signal name.
 */
export function onShutdown(
  logger: Logger,
  stop: () => Promise<void>,
  options: ShutdownOptions = {},
): Handler {
  const timeoutMs = options.timeoutMs ?? DEFAULT_SHUTDOWN_TIMEOUT_MS;
  const exit = options.exit ?? ((code: number) => process.exit(code));
  let stopping = false;
  const run = async (signal: NodeJS.Signals, since = Date.now()) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal, timeoutMs, ...options.fields }, 'shutting down');
    let timer: NodeJS.Timeout | undefined;
    const expired = new Promise<'timeout'>((resolve) => {
      timer = setTimeout(() => resolve('timeout'), Math.max(0, since + timeoutMs - Date.now()));
    });
    try {
      const outcome = await Promise.race([stop().then(() => 'stopped' as const), expired]);
      if (outcome === 'timeout') {
        logger.error({ timeoutMs }, 'shutdown did not finish in time; exiting');
        exit(1);
        return;
      }
      logger.info({ ms: Date.now() - since }, 'stopped');
      exit(0);
    } catch (err) {
      logger.error({ err }, 'unclean shutdown');
      exit(1);
    } finally {
      clearTimeout(timer);
    }
  };
  const handle: Handler = (signal) => run(signal);
  handler = handle;
  listen();
  const early = held;
  held = undefined;
  if (early) void run(early.signal, early.at);
  return handle;
}
