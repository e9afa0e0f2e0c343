/**
 * Migrations 005, 007 and 009 (settlement state) against real Postgres: the tables, keys and
 * open-bets indexes.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestEnv, type TestEnv } from '../../tests/support/projector.ts';

let e: TestEnv;
beforeAll(async () => {
  e = await createTestEnv('mig5');
});
afterAll(async () => {
  await e?.close();
});

describe('migration 005_settlement', () => {
  it('creates the settlement tables with their keys and the open-bets index', async () => {
    const cols = await e.sql<{ table_name: string; cols: string }[]>`
      select table_name, string_agg(column_name, ',' order by ordinal_position) as cols
      from information_schema.columns
      where table_schema = ${e.config.db.schema} and table_name like 'settlement_%'
      group by table_name order by table_name`;
    expect(cols).toEqual([
      {
        table_name: 'settlement_bets',
        cols: 'tx_id,game,round_id,status,state,updated_at,wallet_partition,version',
      },
      { table_name: 'settlement_cash_outs', cols: 'tx_id,game,round_id,multiplier,decided_at' },
      { table_name: 'settlement_closes', cols: 'game,round_id,closed_at' },
      { table_name: 'settlement_outbox', cols: 'type,tx_id,key,value,created_at,wallet_partition' },
      { table_name: 'settlement_partitions', cols: 'partition,epoch,owner,claimed_at' },
      { table_name: 'settlement_rounds', cols: 'game,round_id,finished_at,result' },
    ]);
    const [idx] = await e.sql<{ def: string }[]>`
      select indexdef as def from pg_indexes where schemaname = ${e.config.db.schema} and indexname = 'settlement_bets_open'`;
    expect(idx?.def).toMatch(/\(game, round_id\) WHERE/);
    await expect(
      e.sql`insert into settlement_bets (tx_id, game, round_id, status, state) values (4, 'crash', 1, 'bogus', '{}')`,
    ).rejects.toThrow(/check constraint/);
  });
});

describe('migration 009_settlement_scale_out', () => {
  it('keys partition claims by partition and indexes open bets by wallet partition', async () => {
    const [pk] = await e.sql<{ def: string }[]>`
      select indexdef as def from pg_indexes
      where schemaname = ${e.config.db.schema} and tablename = 'settlement_partitions'`;
    expect(pk?.def).toMatch(/UNIQUE INDEX settlement_partitions_pkey .* \("?partition"?\)/);
    const [idx] = await e.sql<{ def: string }[]>`
      select indexdef as def from pg_indexes
      where schemaname = ${e.config.db.schema} and indexname = 'settlement_bets_open_by_partition'`;
    expect(idx?.def).toMatch(/\(wallet_partition\) WHERE/);
    // Rows from before the migration read as version 1, partition unknown (filled in at start).
    await e.sql`insert into settlement_bets (tx_id, game, round_id, status, state) values (8, 'crash', 1, 'placed', '{}')`;
    const [row] = await e.sql<{ version: string; wallet_partition: number | null }[]>`
      select version::text, wallet_partition from settlement_bets where tx_id = 8`;
    expect(row).toEqual({ version: '1', wallet_partition: null });
  });
});
