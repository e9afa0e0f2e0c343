/**
 * Worker thread of the analytics replay (proof-pipe.ts): checks the provably-fair proof of every
 * round it is handed, in the order it is handed them, with the same ProofChecker as the
 * single-threaded replay, so its summary is the same. Messages in: `{ kind: 'batch', bytes,
 * ends, partitions, offsets }` (record values laid end to end, log order) and `{ kind: 'end' }`;
 * out: `{ kind: 'ack' }` after each batch and `{ kind: 'summary', summary }` after `end`.
 */
import { parentPort } from 'node:worker_threads';
import { decodeRoundEvent } from '../../lib/log/rounds-codec.ts';
import { ProofChecker } from './proofs.ts';

/** A batch of records for the worker; `ends[i]` is where record i's value ends in `bytes`. */
export interface ProofBatch {
  readonly kind: 'batch';
  readonly bytes: Uint8Array;
  readonly ends: Int32Array;
  readonly partitions: Int32Array;
  readonly offsets: Float64Array;
}

export type ProofWorkerIn = ProofBatch | { readonly kind: 'end' };

const checker = new ProofChecker();

parentPort?.on('message', (m: ProofWorkerIn) => {
  if (m.kind === 'end') {
    parentPort?.postMessage({ kind: 'summary', summary: checker.summary() });
    return;
  }
  const bytes = Buffer.from(m.bytes.buffer, m.bytes.byteOffset, m.bytes.byteLength);
  let start = 0;
  for (let i = 0; i < m.ends.length; i++) {
    const end = m.ends[i] as number;
    const round = decodeRoundEvent(bytes.subarray(start, end));
    start = end;
    // The main thread sends only finished rounds of the selected games (it decoded them first).
    if (round.type === 'RoundFinished')
      checker.check(round, { partition: m.partitions[i] as number, offset: String(m.offsets[i]) });
  }
  parentPort?.postMessage({ kind: 'ack' });
});
