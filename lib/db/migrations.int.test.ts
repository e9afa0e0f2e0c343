/**
 * The versioned migrations of lib/db/migrations against real Postgres: the read-model tables
 * with the columns the projector and the API use, seeded games, and re-runs that change nothing.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GAMES } from '../../rules/games/catalog.ts';
import { loadConfig } from '../../tests/support/config.ts';
import { listMigrations, migrate } from './migrate.ts';
import { createSql, type Sql } from './pool.ts';

const schema = `t_mig_${randomBytes(4).toString('hex')}`;
const config = loadConfig(process.env, { DATABASE_SCHEMA: schema });
let sql: Sql;

beforeAll(() => {
  sql = createSql(config, { max: 4 });
});

afterAll(async () => {
  await sql.unsafe(`drop schema if exists "${schema}" cascade`);
  await sql.end();
});

async function columns(table: string): Promise<Record<string, string>> {
  const rows = await sql<{ column_name: string; data_type: string }[]>`
    select column_name, data_type from information_schema.columns
    where table_schema = ${schema} and table_name = ${table} order by ordinal_position`;
  return Object.fromEntries(rows.map((r) => [r.column_name, r.data_type]));
}

describe('migrations', () => {
  it('applies every version once, even when two processes start together', async () => {
    const versions = listMigrations().map((m) => m.version);
    expect(versions).toContain(1);
    const [a, b] = await Promise.all([migrate(sql, schema), migrate(sql, schema)]);
    expect([...(a ?? []), ...(b ?? [])].sort((x, y) => x - y)).toEqual(versions);
    const recorded = await sql`select version from ${sql(schema)}.schema_migrations order by version`;
    expect(recorded.map((r) => r.version)).toEqual(versions);
  });

  it('is a no-op when applied again', async () => {
    const before = await sql`select * from ${sql(schema)}.games order by id`;
    expect(await migrate(sql, schema)).toEqual([]);
    expect(await sql`select * from ${sql(schema)}.games order by id`).toEqual(before);
  });

  it('creates the read-model tables with the expected columns', async () => {
    expect(await columns('rounds')).toEqual({
      game_id: 'integer',
      round_id: 'bigint',
      game_slug: 'text',
      game_type: 'text',
      finished_at: 'timestamp with time zone',
      value: 'text',
      extras: 'jsonb',
      proof: 'jsonb',
      appended_at: 'timestamp with time zone',
    });
    expect(await columns('games')).toEqual({
      id: 'integer',
      slug: 'text',
      name: 'text',
      type: 'text',
      last_round: 'bigint',
      last_update: 'timestamp with time zone',
    });
    expect(await columns('projection_checkpoints')).toEqual({
      projection: 'text',
      topic: 'text',
      partition: 'integer',
      offset: 'bigint',
      updated_at: 'timestamp with time zone',
    });
  });

  it('seeds the four games of the catalogue with an empty game list state', async () => {
    const games =
      await sql`select id, slug, name, type, last_round, last_update from ${sql(schema)}.games order by id`;
    expect(games).toEqual(
      GAMES.map((g) => ({
        id: g.id,
        slug: g.slug,
        name: g.name,
        type: g.type,
        last_round: null,
        last_update: null,
      })),
    );
  });

  it('keys rounds by (game_id, round_id), checkpoints by (projection, topic, partition), wallet rows by tx id', async () => {
    const keys = await sql<{ table_name: string; cols: string }[]>`
      select tc.table_name, string_agg(kcu.column_name, ',' order by kcu.ordinal_position) as cols
      from information_schema.table_constraints tc
      join information_schema.key_column_usage kcu
        on kcu.constraint_name = tc.constraint_name and kcu.table_schema = tc.table_schema
      where tc.table_schema = ${schema} and tc.constraint_type = 'PRIMARY KEY'
      group by tc.table_name order by tc.table_name`;
    expect(keys).toEqual([
      { table_name: 'access_round_bets', cols: 'operator_id,user_id,round_id' },
      { table_name: 'access_sessions', cols: 'session_id' },
      { table_name: 'api_keys', cols: 'key_id' },
      { table_name: 'demo_wallets', cols: 'session_id' },
      { table_name: 'free_bet_redemptions', cols: 'tx_id' },
      { table_name: 'free_bets', cols: 'grant_id' },
      { table_name: 'games', cols: 'id' },
      { table_name: 'operator_breakers', cols: 'operator_id' },
      { table_name: 'operators', cols: 'operator_id' },
      { table_name: 'play_bets', cols: 'tx_id' },
      { table_name: 'portal_links', cols: 'token_hash' },
      { table_name: 'portal_sessions', cols: 'session_hash' },
      { table_name: 'projection_checkpoints', cols: 'projection,topic,partition' },
      { table_name: 'rounds', cols: 'game_id,round_id' },
      { table_name: 'schema_migrations', cols: 'version' },
      { table_name: 'settlement_bets', cols: 'tx_id' },
      { table_name: 'settlement_cash_outs', cols: 'tx_id' },
      { table_name: 'settlement_closes', cols: 'game,round_id' },
      { table_name: 'settlement_outbox', cols: 'type,tx_id' },
      { table_name: 'settlement_partitions', cols: 'partition' },
      { table_name: 'settlement_rounds', cols: 'game,round_id' },
      { table_name: 'wallet_balances', cols: 'operator_id,user_id,currency' },
      { table_name: 'wallet_bets', cols: 'tx_id' },
      { table_name: 'wallet_callback_attempts', cols: 'tx_id,attempt' },
      { table_name: 'wallet_callbacks', cols: 'tx_id' },
      { table_name: 'wallet_outbox', cols: 'id' },
      { table_name: 'wallet_transactions', cols: 'tx_id' },
    ]);
  });
});
