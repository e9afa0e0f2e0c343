/**
 * The analytics replay's proof checks on a second core: the main thread reads,
 * decodes and folds the statistics; the raw values of the finished rounds it folded go, in log
 * order and in batches of BATCH_RECORDS, to a worker thread (proof-worker.ts) that decodes them
 * again and checks their proofs with the same ProofChecker, so the fairness summary is the one the
 * single-threaded replay gives. At most MAX_IN_FLIGHT batches wait for the worker: past that,
 * `add` returns a promise the reader awaits, so memory stays bounded whatever the range.
 *
 * Why a copy and a second decode rather than the decoded rounds: a batch of bytes moves to the
 * worker without a copy (transferred), where structured-cloning rounds would cost the main thread
 * about what the checks cost.
 */
import { Worker } from 'node:worker_threads';
import type { ProofBatch, ProofWorkerIn } from './proof-worker.ts';
import type { FairnessSummary } from './proofs.ts';

const BATCH_RECORDS = 1000;
const MAX_IN_FLIGHT = 4;

/** Where the worker's module is: the TypeScript source under tsx, the compiled file in dist/. */
function workerUrl(): { url: URL; execArgv: string[] } {
  const ts = import.meta.url.endsWith('.ts');
  const url = new URL(`./proof-worker.${ts ? 'ts' : 'js'}`, import.meta.url);
  // A worker does not inherit a loader registered by the parent's --import unless it is in execArgv.
  const execArgv =
    ts && !process.execArgv.includes('tsx') ? [...process.execArgv, '--import', 'tsx'] : process.execArgv;
  return { url, execArgv };
}

/** See the module comment. */
export class ProofPipe {
  readonly #worker: Worker;
  #bytes = new Uint8Array(256 * 1024);
  #length = 0;
  #ends: number[] = [];
  #partitions: number[] = [];
  #offsets: number[] = [];
  #inFlight = 0;
  #drained: (() => void) | undefined;
  #summary: Promise<FairnessSummary>;
  #failed: Error | undefined;

  constructor() {
    const { url, execArgv } = workerUrl();
    this.#worker = new Worker(url, { execArgv });
    this.#summary = new Promise((resolve, reject) => {
      this.#worker.on('message', (m: { kind: 'ack' } | { kind: 'summary'; summary: FairnessSummary }) => {
        if (m.kind === 'summary') resolve(m.summary);
        else {
          this.#inFlight--;
          this.#drained?.();
          this.#drained = undefined;
        }
      });
      this.#worker.on('error', (err) => {
        this.#failed = err;
        this.#drained?.();
        reject(err);
      });
    });
    this.#summary.catch(() => {}); // surfaced by finish()
  }

  /**
   * Queues a finished round's raw value for its proof check.
   * @returns a promise to await before the next record when the worker is behind, else undefined.
   * @throws the worker's error, once it failed.
   */
  add(value: Buffer, partition: number, offset: string): Promise<void> | undefined {
    if (this.#failed) throw this.#failed;
    if (this.#length + value.length > this.#bytes.length) {
      const grown = new Uint8Array(Math.max(this.#bytes.length * 2, this.#length + value.length));
      grown.set(this.#bytes.subarray(0, this.#length));
      this.#bytes = grown;
    }
    this.#bytes.set(value, this.#length);
    this.#length += value.length;
    this.#ends.push(this.#length);
    this.#partitions.push(partition);
    this.#offsets.push(Number(offset));
    if (this.#ends.length < BATCH_RECORDS) return undefined;
    this.#flush();
    if (this.#inFlight < MAX_IN_FLIGHT) return undefined;
    return new Promise((resolve) => {
      this.#drained = resolve;
    });
  }

  /** Checks what is queued and resolves with the summary; the worker then ends. @throws its error. */
  async finish(): Promise<FairnessSummary> {
    try {
      this.#flush();
      this.#worker.postMessage({ kind: 'end' } satisfies ProofWorkerIn);
      return await this.#summary;
    } finally {
      await this.#worker.terminate();
    }
  }

  /** Ends the worker without a summary (the replay failed). */
  async close(): Promise<void> {
    await this.#worker.terminate();
  }

  #flush(): void {
    if (this.#ends.length === 0) return;
    const bytes = this.#bytes.slice(0, this.#length);
    const batch: ProofBatch = {
      kind: 'batch',
      bytes,
      ends: Int32Array.from(this.#ends),
      partitions: Int32Array.from(this.#partitions),
      offsets: Float64Array.from(this.#offsets),
    };
    const moved = [bytes, batch.ends, batch.partitions, batch.offsets].map((a) => a.buffer as ArrayBuffer);
    this.#worker.postMessage(batch, moved);
    this.#inFlight++;
    this.#length = 0;
    this.#ends = [];
    this.#partitions = [];
    this.#offsets = [];
  }
}
