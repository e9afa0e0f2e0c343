/**
 * The saga's transactional outbox (wallet_outbox, migration 008): an event is committed with the
 * state that decided it, then appended to `wallet-transactions` and deleted. `flush(ids)` does that
 * right after a commit; the relay appends rows that stayed behind (a crash or a broker error
 * between the commit and the append) once they are `staleMs` old. An event may therefore reach the
 * log twice (appended, then the process died before the delete); every reader of
 * wallet-transactions is idempotent on (type, tx_id), so a copy changes nothing.
 */
import type { Producer } from 'kafkajs';
import type { Sql } from '../../lib/db/pool.ts';
import type { Logger } from '../../lib/logger.ts';

export interface Outbox {
  /**
   * Appends the rows `ids` (in id order, batched with other callers' rows) and deletes them.
   * @throws kafkajs or postgres.js errors.
   */
  flush(ids: readonly bigint[]): Promise<void>;
  /** Starts the relay of rows older than `staleMs`, every `intervalMs`. */
  startRelay(): void;
  stop(): Promise<void>;
}

export interface OutboxDeps {
  readonly sql: Sql;
  readonly producer: Producer;
  readonly topic: string;
  readonly logger: Logger;
  readonly staleMs?: number;
  readonly intervalMs?: number;
}

interface Row {
  id: string;
  key: string;
  value: Buffer;
}

/** The outbox over `sql`, appending with `producer` (idempotent, acks all). */
export function createOutbox(deps: OutboxDeps): Outbox {
  const { sql, producer, topic } = deps;
  const staleMs = deps.staleMs ?? 3_000;
  const intervalMs = deps.intervalMs ?? 1_000;
  let timer: NodeJS.Timeout | null = null;
  let running: Promise<void> | null = null;
  let stopped = false;

  const send = (rows: readonly Row[]) =>
    producer.send({ topic, acks: -1, messages: rows.map((r) => ({ key: r.key, value: r.value })) });

  const relayOnce = async (): Promise<void> => {
    await sql.begin(async (tx) => {
      const rows = await tx<Row[]>`
        select id::text, key, value from wallet_outbox
        where created_at < now() - make_interval(secs => ${staleMs / 1000})
        order by id limit 500 for update skip locked`;
      if (rows.length === 0) return;
      await send(rows);
      await tx`delete from wallet_outbox where id = any(${rows.map((r) => r.id)}::bigint[])`;
      deps.logger.info({ events: rows.length }, 'outbox relay appended events left behind');
    });
  };

  const tick = () => {
    timer = null;
    if (stopped) return;
    running = relayOnce()
      .catch((err) => deps.logger.warn({ err: (err as Error).message }, 'outbox relay failed; retried'))
      .finally(() => {
        running = null;
        if (!stopped) timer = setTimeout(tick, intervalMs);
      });
  };

  // Flushes are batched: ids asked for while a batch is on its way go in the next one (one select,
  // one append, one delete per batch), so a burst of answers costs a few round trips, not one each.
  const waiting = new Map<bigint, { resolve: () => void; reject: (err: unknown) => void }[]>();
  let draining: Promise<void> | null = null;
  const drain = async (): Promise<void> => {
    while (waiting.size > 0) {
      const batch = [...waiting.entries()].slice(0, 500);
      for (const [id] of batch) waiting.delete(id);
      const ids = batch.map(([id]) => String(id));
      try {
        const rows = await sql<Row[]>`
          select id::text, key, value from wallet_outbox where id = any(${ids}::bigint[]) order by id`;
        // Rows the relay took first are already on the log.
        if (rows.length > 0) {
          await send(rows);
          await sql`delete from wallet_outbox where id = any(${rows.map((r) => r.id)}::bigint[])`;
        }
        for (const [, ws] of batch) for (const w of ws) w.resolve();
      } catch (err) {
        for (const [, ws] of batch) for (const w of ws) w.reject(err);
      }
    }
  };

  const kick = (): void => {
    if (draining) return;
    draining = drain().finally(() => {
      draining = null;
      // Asked for after the last look at `waiting` but before this settled.
      if (waiting.size > 0) kick();
    });
  };

  return {
    flush(ids) {
      if (ids.length === 0) return Promise.resolve();
      const done = Promise.all(
        ids.map(
          (id) =>
            new Promise<void>((resolve, reject) => {
              const ws = waiting.get(id) ?? [];
              ws.push({ resolve, reject });
              waiting.set(id, ws);
            }),
        ),
      ).then(() => {});
      kick();
      return done;
    },
    startRelay() {
      if (!timer && !stopped) timer = setTimeout(tick, intervalMs);
    },
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      timer = null;
      await running;
    },
  };
}
