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
 * With this preload a listener exists from the start, so the signal never takes its default action. It
 * reaches JavaScript when the event loop next turns: while the modules still load, it is held here
 * and lib/lifecycle.ts takes it over (`EARLY_SIGNALS`); when that turn comes only once the main runs
 * (modules evaluate synchronously), lib/lifecycle.ts's own listener gets it. Either way the service
 * finishes starting and stops, exit 0, within lib/lifecycle.ts's bound counted from the signal.
 *
 * The bound: a process whose main never takes the signal over within SHUTDOWN_TIMEOUT_MS (read here
 * from the environment, since the config modules have not loaded yet; 30 000 ms when unset or not a
 * positive integer) after it exits 1, so a signal is never swallowed by a process that does not use
 * lib/lifecycle.ts. (Once taken over, the service's own bound applies: the edges add EDGE_DRAIN_MS.)
 * Importing this module has these effects and exports nothing.
 */
import { EARLY_SIGNALS, type HeldSignal, earlySignalsSlot as slot } from './lifecycle.ts';

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
