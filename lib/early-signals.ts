/**
 * Holds SIGINT and SIGTERM from a process's first moments, before its main has loaded. Preloaded
 * ahead of the TypeScript loader, by Node's own type stripping (so this file and lib/lifecycle.ts,
 * which it imports, use erasable TypeScript only):
 *
 *   node --import ./lib/early-signals.ts --import tsx services/<name>/main.ts
 *   deno run ... --preload ./lib/early-signals.ts services/edge-webtransport/main.ts
 *
 * (scripts/start.sh runs every service so). Why: a main can only call `holdSignals`
 * (lib/lifecycle.ts) once every module it imports has loaded, which takes one to several seconds on a
 * busy machine; a Ctrl-C in that window used to end the service by the signal's default action, so
 * `npm start` reported a service that "did not stop cleanly" (status 1) although nothing had started.
 * With this preload a listener exists from the start, so the signal never takes its default action: it
 * is held here when it reaches JavaScript before the main does (a loader that lets the event loop run
 * while modules load, as Deno's), else it reaches lib/lifecycle.ts's own listener (Node runs tsx's
 * hooks off the main thread, whose event loop waits until the main module runs); lib/lifecycle.ts
 * takes a held one over (`EARLY_SIGNALS`), and either way the service stops once started, exit 0,
 * within the same bound.
 *
 * The bound: a process whose main never takes the signal over within SHUTDOWN_TIMEOUT_MS (read here
 * from the environment, since the config modules have not loaded yet; 30 000 ms when unset or not a
 * positive integer) after it exits 1, so a signal is never swallowed by a process that does not use
 * lib/lifecycle.ts. Importing this module has these effects and exports nothing.
 */
import { EARLY_SIGNALS, type EarlySignals, type HeldSignal } from './lifecycle.ts';

const slot = globalThis as { [EARLY_SIGNALS]?: EarlySignals };

if (!slot[EARLY_SIGNALS]) {
  const raw = Number(process.env.SHUTDOWN_TIMEOUT_MS);
  const boundMs = Number.isSafeInteger(raw) && raw > 0 ? raw : 30_000;
  let held: HeldSignal | undefined;
  let bound: NodeJS.Timeout | undefined;
  const hold = (signal: NodeJS.Signals) => {
    if (held) return;
    held = { signal, at: Date.now() };
    bound = setTimeout(() => {
      process.stderr.write(
        `${signal} while loading, and no stop took it over within ${boundMs} ms; exiting 1\n`,
      );
      process.exit(1);
    }, boundMs);
    bound.unref();
  };
  process.on('SIGINT', hold);
  process.on('SIGTERM', hold);
  slot[EARLY_SIGNALS] = {
    takeOver() {
      process.off('SIGINT', hold);
      process.off('SIGTERM', hold);
      clearTimeout(bound);
      return held;
    },
  };
}
