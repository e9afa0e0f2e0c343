/**
 * Preloaded into the edge process by the fan-out benchmark only (`node --expose-gc --import
 * tsx --import ./bench/edge-gc-hook.ts services/edge/main.ts`): SIGUSR2 runs two full garbage
 * collections, so the benchmark can read the edge's resident memory after a GC instead of
 * guessing when V8 collected. Without --expose-gc it does nothing.
 */
const gc = (globalThis as { gc?: () => void }).gc;
if (gc) {
  process.on('SIGUSR2', () => {
    gc();
    gc();
  });
}
