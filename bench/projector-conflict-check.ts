/**
 * Cost of the projector's conflict check (lib/projections/rounds/store.ts refuseConflicts)
 * beside the chunk write it precedes, on the local Postgres: chunks of 5,000 new rounds (after 4 of
 * warm-up, the median of 20), then one chunk replayed whole (every id stored, so every row is read
 * back and compared). Prints both medians and the replay's time, ms.
 *
 * Usage: tsx bench/projector-conflict-check.ts
 */
import { randomBytes } from 'node:crypto';
import { migrate } from '../lib/db/migrate.ts';
import { createSql } from '../lib/db/pool.ts';
import { type OffsetEvent, refuseConflicts, writeChunk } from '../lib/projections/rounds/store.ts';
import { loadConfig } from '../tests/support/config.ts';
import { syntheticRound } from '../tests/support/rounds-fixture.ts';

const CHUNK = 5000;
const WARM_UP = 4;
const MEASURED = 20;
const schema = `bench_conflict_${randomBytes(4).toString('hex')}`;
const sql = createSql(loadConfig(process.env, { DATABASE_SCHEMA: schema }), { max: 2 });
await migrate(sql, schema);
const key = { projection: 'rounds', topic: 'rounds', partition: 0 };
let seq = 0;
const chunk = (): OffsetEvent[] =>
  Array.from({ length: CHUNK }, () => {
    const i = seq++;
    const at = Date.now();
    return {
      offset: BigInt(i),
      event: { round: syntheticRound(i, Math.floor(i / 4) + 1, at), appendedAt: at },
    };
  });
const median = (a: readonly number[]) =>
  ([...a].sort((x, y) => x - y)[Math.floor(a.length / 2)] ?? 0).toFixed(1);
try {
  const check: number[] = [];
  const write: number[] = [];
  let first: OffsetEvent[] = [];
  for (let k = 0; k < WARM_UP + MEASURED; k++) {
    const c = chunk();
    if (k === 0) first = c;
    const t0 = performance.now();
    await refuseConflicts(sql, c);
    const t1 = performance.now();
    await writeChunk(sql, key, c, BigInt(seq));
    if (k >= WARM_UP) {
      check.push(t1 - t0);
      write.push(performance.now() - t1);
    }
  }
  const t0 = performance.now();
  await refuseConflicts(sql, first);
  const replay = performance.now() - t0;
  console.log(
    `chunks of ${CHUNK} new rounds: check ${median(check)} ms, write ${median(write)} ms (medians of ${MEASURED}); ` +
      `a replayed chunk of ${CHUNK} stored rounds: check ${replay.toFixed(1)} ms`,
  );
} finally {
  await sql.unsafe(`drop schema if exists "${schema}" cascade`);
  await sql.end();
}
