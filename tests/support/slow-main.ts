/**
 * A stand-in service main for lib/early-signals.unit.test.ts: writes `loading`, then spends
 * SLOW_MAIN_LOAD_MS (ms, default 4000) standing for its modules loading (a busy wait; with
 * SLOW_MAIN_ASYNC=1 a timer, the event loop turning meanwhile), then calls
 * `holdSignals`, starts (200 ms), writes `started`, registers a stop that writes `stopped` and runs
 * until stopped. With SLOW_MAIN_NO_LIFECYCLE=1 it never uses lib/lifecycle.ts (a process that does
 * not take an early signal over) and just stays alive.
 */
process.stdout.write('loading\n');
const loadMs = Number(process.env.SLOW_MAIN_LOAD_MS ?? 4000);
if (process.env.SLOW_MAIN_ASYNC === '1') await new Promise((r) => setTimeout(r, loadMs));
else {
  const until = Date.now() + loadMs;
  while (Date.now() < until) {
    // the modules loading, the event loop not turning (as while modules evaluate)
  }
}
const keepAlive = setInterval(() => {}, 1000);
if (process.env.SLOW_MAIN_NO_LIFECYCLE !== '1') {
  const { holdSignals, onShutdown } = await import('../../lib/lifecycle.ts');
  const { createLogger } = await import('../../lib/logger.ts');
  const logger = createLogger('slow-main', 'info');
  // A held signal's bound counts from the signal, which came up to `loadMs` ago (SLOW_MAIN_ASYNC):
  // 5 s beyond that for these imports and the start, on a loaded machine.
  const boundMs = loadMs + 5000;
  holdSignals(logger, boundMs);
  await new Promise((r) => setTimeout(r, 200));
  process.stdout.write('started\n');
  onShutdown(
    logger,
    async () => {
      clearInterval(keepAlive);
      process.stdout.write('stopped\n');
    },
    { timeoutMs: boundMs },
  );
}
