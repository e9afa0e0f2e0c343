/**
 * Progress of a rebuild on a terminal stream (stderr): a cli-progress bar with records/s and ETA
 * while the log is replayed, or, when the stream is not a TTY (a log file, CI), the same figures as
 * a plain line every second (cli-progress's noTTYOutput mode); steps as lines of their own.
 */
import cliProgress from 'cli-progress';
import type { RebuildProgress } from '../../../lib/rebuild/rebuild.ts';

/** Where progress goes: stderr, or any writable stream (not a TTY unless it says so). */
export type ProgressStream = NodeJS.WritableStream & { readonly isTTY?: boolean };

export interface ProgressPrinter {
  /** Feeds one progress event. */
  update(p: RebuildProgress): void;
  /** Stops the bar (final render). */
  stop(): void;
}

/** Records per second from `done` records since `sinceMs` (performance.now()). */
function rate(done: number, sinceMs: number, nowMs: number): number {
  const s = (nowMs - sinceMs) / 1000;
  return s > 0 ? Math.round(done / s) : 0;
}

/** A printer writing to `stream` for read model `model`. */
export function createProgressPrinter(stream: ProgressStream, model: string): ProgressPrinter {
  const tty = stream.isTTY === true;
  const bar = new cliProgress.SingleBar(
    {
      stream,
      format: tty
        ? `rebuild ${model} [{bar}] {percentage}% | {value}/{total} records | {rate} records/s | ETA {eta_formatted}`
        : `rebuild ${model}: replay {value}/{total} records ({percentage}%), {rate} records/s, ETA {eta_formatted}`,
      noTTYOutput: true,
      notTTYSchedule: 1000,
      hideCursor: tty,
      etaBuffer: 50,
      gracefulExit: true,
    },
    cliProgress.Presets.shades_classic,
  );
  let running = false;
  /** The replay is over: later catch-ups (a few records) are told by the steps, not a new bar. */
  let replayed = false;
  let startedAt = 0;
  let startDone = 0;
  const line = (s: string) => stream.write(`${s}\n`);
  return {
    update(p) {
      if (p.phase === 'step') {
        if (running) {
          bar.stop();
          running = false;
          replayed = true;
        }
        line(`rebuild ${model}: ${p.message}`);
        return;
      }
      if (replayed) return;
      if (!running) {
        running = true;
        startedAt = performance.now();
        startDone = p.done;
        bar.start(Math.max(p.total, 1), p.done, { rate: 0 });
      }
      if (p.total !== bar.getTotal()) bar.setTotal(Math.max(p.total, 1));
      bar.update(p.done, { rate: rate(p.done - startDone, startedAt, performance.now()) });
    },
    stop() {
      if (running) bar.stop();
      running = false;
    },
  };
}
