/**
 * The projection's SQL on real Postgres, as "given these events, then these rows": one chunk
 * write stores rows, game list and checkpoint together, and replays change nothing.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../tests/support/config.ts';
import { sampleRound } from '../../../tests/support/projector.ts';
import { readCheckpoints } from '../../db/checkpoints.ts';
import { migrate } from '../../db/migrate.ts';
import { createSql, type Sql } from '../../db/pool.ts';
import { type OffsetEvent, writeChunk } from './store.ts';

const schema = `t_store_${randomBytes(4).toString('hex')}`;
const config = loadConfig(process.env, { DATABASE_SCHEMA: schema });
const key = { projection: 'rounds', topic: 'rounds', partition: 1 };
const T0 = Date.UTC(2026, 0, 1);
let sql: Sql;

beforeAll(async () => {
  sql = createSql(config, { max: 2 });
  await migrate(sql, schema);
});

afterAll(async () => {
  await sql.unsafe(`drop schema if exists "${schema}" cascade`);
  await sql.end();
});

const crash = (seq: number, offset: number): OffsetEvent => ({
  offset: BigInt(offset),
  event: { round: sampleRound('crash', seq, T0 + seq * 1000), appendedAt: T0 + seq * 1000 + 3 },
});

async function state() {
  const rows = await sql<{ r: string; value: string; extras: unknown; proof: unknown; appended_at: Date }[]>`
    select round_id::text as r, value, extras, proof, appended_at from rounds order by round_id`;
  const [game] = await sql<{ last_round: string | null; last_update: Date | null }[]>`
    select last_round::text, last_update from games where slug = 'crash'`;
  return { rows, game, checkpoints: await readCheckpoints(sql, key.projection, key.topic) };
}

describe('writeChunk', () => {
  it('stores rows, the game list and the checkpoint together', async () => {
    const result = await writeChunk(sql, key, [crash(1, 10), crash(2, 11), crash(3, 12)], 13n);
    expect(result).toEqual({ projected: 3, inserted: 3, checkpoint: 13n });
    const s = await state();
    expect(s.rows.map((r) => r.r)).toEqual(['1000000000001', '1000000000002', '1000000000003']);
    expect(s.rows[1]).toMatchObject({
      value: '3.02',
      extras: { point: '3.02' },
      proof: expect.objectContaining({ chain_index: 2 }),
    });
    expect(s.rows[0]?.proof).toBeNull();
    expect(s.rows[0]?.appended_at).toEqual(new Date(T0 + 1003));
    expect(s.game).toEqual({ last_round: '1000000000003', last_update: new Date(T0 + 3000) });
    expect(s.checkpoints).toEqual(new Map([[1, 13n]]));
  });

  it('changes nothing when the same chunk is written again', async () => {
    const before = await state();
    const result = await writeChunk(sql, key, [crash(1, 10), crash(2, 11), crash(3, 12)], 13n);
    expect(result).toEqual({ projected: 3, inserted: 0, checkpoint: 13n });
    expect(await state()).toEqual(before);
  });

  it('never moves the game list or the checkpoint back when an older chunk is replayed', async () => {
    await writeChunk(sql, key, [crash(4, 13)], 14n);
    const result = await writeChunk(sql, key, [crash(2, 11)], 12n);
    expect(result.checkpoint).toBe(14n);
    const s = await state();
    expect(s.game).toEqual({ last_round: '1000000000004', last_update: new Date(T0 + 4000) });
    expect(s.checkpoints.get(1)).toBe(14n);
    expect(s.rows).toHaveLength(4);
  });

  it('moves the checkpoint over a chunk with no decodable event', async () => {
    expect(await writeChunk(sql, key, [], 20n)).toEqual({ projected: 0, inserted: 0, checkpoint: 20n });
    expect((await state()).rows).toHaveLength(4);
  });

  it('keeps JSON text intact, quotes and backslashes included', async () => {
    const round = sampleRound('slot', 1, T0);
    const odd = {
      ...round,
      result: { game: 'slot', reels: ['a"b', 'c\\d', '{e}'], multiplier: '1.00' } as const,
    };
    await writeChunk(
      sql,
      { ...key, partition: 2 },
      [{ offset: 0n, event: { round: odd, appendedAt: T0 } }],
      1n,
    );
    const [row] = await sql`select extras from rounds where game_id = 3`;
    expect(row?.extras).toEqual({ reels: ['a"b', 'c\\d', '{e}'], multiplier: '1.00' });
  });
});
