/**
 * The bets' process managers as a spec of the checkpointed consumer (lib/log/checkpointed-consumer.ts)
 * on `wallet-transactions`, shared by every saga instance through its consumer group. Per batch of
 * one partition: load the states of the bets it touches, apply each event in log order
 * (rules/wallet/process.ts decide/evolve), and write in ONE statement the new states, the
 * callbacks they ask for, the events they append (outbox) and the checkpoint (store.ts). After
 * the commit the events are appended and the dispatcher is woken for the new callbacks.
 *
 * A replay (a partition read again after a crash, or from the start by a new deployment) is
 * harmless: states move only forward, callbacks are keyed by their provider_tx_id, and a callback
 * whose outcome the log already holds is stored as done instead of due.
 */
import type { KafkaMessage } from 'kafkajs';
import type { ConsumerSpec } from '../../lib/log/consumer-spec.ts';
import { decodeWalletEvent, encodeEvent, type WalletEvent, walletKey } from '../../lib/log/wallet-events.ts';
import type { Logger } from '../../lib/logger.ts';
import { type BetProcess, betOf, finished, step } from '../../rules/wallet/process.ts';
import type { SagaMetrics } from './metrics.ts';
import type { Outbox } from './outbox.ts';
import {
  loadProcesses,
  type NewCallback,
  type OutboxEntry,
  SAGA_PROJECTION,
  writeProcesses,
} from './store.ts';

/** A decoded record with its offset. */
export interface Input {
  readonly event: WalletEvent;
  readonly offset: bigint;
}

export interface ProcessesDeps {
  readonly outbox: Outbox;
  readonly metrics: SagaMetrics;
  readonly logger: Logger;
  /** Unix ms. */
  readonly now: () => number;
  /** Called after a commit that added due callbacks. */
  readonly onCallbacks: () => void;
}

/** The tx ids of callbacks whose outcome `e` is (a success, or a failure that is final). */
function outcomeOf(e: WalletEvent): number | undefined {
  if (e.type === 'CallbackSucceeded') return e.value.tx_id;
  if (e.type === 'CallbackFailed' && (e.value.parked || e.value.kind === 'bet')) return e.value.tx_id;
  return undefined;
}

/**
 * Applies `inputs` (log order) to `states` (loaded, mutated): the callbacks, events and
 * violations they give. Pure apart from mutating `states`.
 */
export function applyBatch(
  inputs: readonly Input[],
  states: Map<number, BetProcess>,
  at: number,
): {
  changed: Set<number>;
  callbacks: NewCallback[];
  outcomes: number[];
  events: WalletEvent[];
  violations: string[];
} {
  const changed = new Set<number>();
  const callbacks = new Map<number, NewCallback>();
  const outcomes: number[] = [];
  const events: WalletEvent[] = [];
  const violations: string[] = [];
  for (const { event, offset } of inputs) {
    const id = betOf(event);
    const before = states.get(id);
    const { state, decision } = step(before, event, at);
    if (decision.violation) violations.push(decision.violation);
    for (const c of decision.commands) {
      if (c.type === 'append') events.push(c.event);
      else if (!callbacks.has(c.job.txId))
        callbacks.set(c.job.txId, {
          job: c.job,
          playerKey: walletKey(c.job.bet),
          seq: offset,
          status: 'due',
        });
    }
    const done = outcomeOf(event);
    if (done !== undefined) {
      const pending = callbacks.get(done);
      if (pending) callbacks.set(done, { ...pending, status: 'done' });
      else outcomes.push(done);
    }
    if (state && state !== before) {
      states.set(id, state);
      changed.add(id);
    }
  }
  return { changed, callbacks: [...callbacks.values()], outcomes, events, violations };
}

/** The spec of the processes' consumer. */
export function processesSpec(deps: ProcessesDeps): ConsumerSpec<Input> {
  const log = deps.logger.child({ component: 'wallet-processes' });
  return {
    name: SAGA_PROJECTION,
    topics: ['walletTransactions'],
    chunkSize: 500,
    decode: (m: KafkaMessage) => ({ event: decodeWalletEvent(m.value), offset: BigInt(m.offset) }),
    async write(sql, key, inputs, next) {
      const at = deps.now();
      const ids = [...new Set(inputs.map((i) => betOf(i.event)))];
      const states = await loadProcesses(sql, ids);
      const r = applyBatch(inputs, states, at);
      const outbox: OutboxEntry[] = r.events.map((e) => {
        const s = states.get(betOf(e)) as BetProcess;
        return { key: walletKey(s.bet), value: encodeEvent(e) };
      });
      const rows = new Map(
        [...r.changed].map((id) => {
          const s = states.get(id) as BetProcess;
          return [id, { state: s, playerKey: walletKey(s.bet), finished: finished(s) }] as const;
        }),
      );
      const outboxIds = await writeProcesses(
        sql,
        key,
        { states: rows, callbacks: r.callbacks, outcomes: r.outcomes, outbox },
        next,
        at,
      );
      let reported = false;
      return {
        checkpoint: next,
        async afterCommit() {
          if (!reported) {
            reported = true;
            for (const v of r.violations) {
              deps.metrics.violations.inc();
              log.error({ violation: v }, 'money invariant: event not acted on');
            }
            for (const c of r.callbacks)
              if (c.status === 'due') deps.metrics.scheduled.inc({ kind: c.job.kind });
            if (r.callbacks.some((c) => c.status === 'due')) deps.onCallbacks();
          }
          await deps.outbox.flush(outboxIds);
        },
      };
    },
  };
}
