/**
 * The reconciliation query (reconcile.ts) on real Postgres: the platform's wallet_transactions
 * (lib/db/migrations) and the sandbox ledger (migrations of this service), each in a
 * schema of its own, filled by hand: "given these rows, then this report".
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { migrate } from '../../lib/db/migrate.ts';
import { createSql, type Sql } from '../../lib/db/pool.ts';
import { loadConfig } from '../../tests/support/config.ts';
import { SANDBOX_MIGRATIONS_DIR } from './app.ts';
import { reconcile } from './reconcile.ts';

const id = randomBytes(4).toString('hex');
const platformSchema = `t_rec_${id}`;
const sandboxSchema = `t_rec_sbx_${id}`;
const OP = 'opr_rec';
const INITIAL = 100_000;
let sql: Sql;

const run = () =>
  reconcile(sql, { platformSchema, sandboxSchema, operatorId: OP, initialBalanceMinor: INITIAL });

type Kind = 'bet' | 'win' | 'rollback';
/** A wallet_transactions row of player `user` (round 1, crash, USD). */
async function row(
  tx: number,
  kind: Kind | 'close',
  amount: number,
  status: string,
  roundStatus: string,
  over: { mode?: string; demo?: boolean; user?: string } = {},
): Promise<void> {
  const bet = tx - (tx % 4);
  await sql.unsafe(
    `insert into "${platformSchema}".wallet_transactions (tx_id, bet_tx_id, kind, session_id, operator_id, user_id,
       currency, game, round_id, amount_minor, mode, demo, status, round_status, requested_at, updated_at)
     values ($1, $2, $3, gen_random_uuid(), $4, $5, 'USD', 'crash', 1, $6, $7, $8, $9, $10, now(), now())`,
    [
      tx,
      bet,
      kind,
      OP,
      over.user ?? 'u1',
      amount,
      over.mode ?? 'default',
      over.demo ?? false,
      status,
      roundStatus,
    ],
  );
}

/** An operator movement of `user`, keeping the account's balance in step. */
async function movement(tx: number, kind: Kind, amount: number, delta: number, user = 'u1'): Promise<void> {
  await sql.unsafe(
    `insert into "${sandboxSchema}".accounts (user_id, currency, balance_minor) values ($1, 'USD', $2)
     on conflict do nothing`,
    [user, INITIAL],
  );
  await sql.unsafe(
    `update "${sandboxSchema}".accounts set balance_minor = balance_minor + $2 where user_id = $1`,
    [user, delta],
  );
  await sql.unsafe(
    `insert into "${sandboxSchema}".transactions (kind, provider_tx_id, user_id, currency, linked_tx_id,
       amount_minor, delta_minor, round_id, game, body_hash, response)
     values ($1, $2, $3, 'USD', $4, $5, $6, '1', 'crash', 'h', '{}')`,
    [kind, String(tx), user, kind === 'bet' ? null : String(tx - (tx % 4)), amount, delta],
  );
}

beforeAll(async () => {
  sql = createSql(loadConfig(process.env, { DATABASE_SCHEMA: platformSchema }), { max: 2 });
  await migrate(sql, platformSchema);
  await migrate(sql, sandboxSchema, SANDBOX_MIGRATIONS_DIR);
});
beforeEach(async () => {
  await sql.unsafe(`truncate "${platformSchema}".wallet_transactions`);
  await sql.unsafe(`truncate "${sandboxSchema}".transactions, "${sandboxSchema}".accounts`);
});
afterAll(async () => {
  await sql?.unsafe(`drop schema if exists "${platformSchema}" cascade`);
  await sql?.unsafe(`drop schema if exists "${sandboxSchema}" cascade`);
  await sql?.end();
});

describe('reconcile', () => {
  it('agrees and is settled for a won bet, a lost bet and a compensated bet', async () => {
    await row(4, 'bet', 100, 'succeeded', 'won');
    await row(5, 'win', 250, 'succeeded', 'won');
    await movement(4, 'bet', 100, -100);
    await movement(5, 'win', 250, 250);
    await row(8, 'bet', 100, 'succeeded', 'lost');
    await movement(8, 'bet', 100, -100);
    // The lost bet's round closed at the operator with a zero-amount win.
    await row(9, 'close', 0, 'succeeded', 'lost');
    await movement(9, 'win', 0, 0);
    // commit-then-500: the operator debited, the platform rejected the bet and rolled it back.
    await row(12, 'bet', 300, 'rejected', 'cancelled');
    await row(14, 'rollback', 300, 'succeeded', 'cancelled');
    await movement(12, 'bet', 300, -300);
    await movement(14, 'rollback', 300, 300);
    // A demo bet moves nothing at the operator and is not counted.
    await row(16, 'bet', 100, 'succeeded', 'lost', { demo: true, user: 'd1' });
    expect(await run()).toEqual({
      agreed: true,
      settled: true,
      bets: 3,
      mismatches: [],
      unknown: [],
      broken_accounts: [],
      outstanding: [],
    });
  });

  it('counts a debited bet whose round is still open as outstanding, not settled', async () => {
    await row(4, 'bet', 100, 'succeeded', 'open');
    await movement(4, 'bet', 100, -100);
    await row(8, 'bet', 100, 'pending', 'open');
    const r = await run();
    expect(r.agreed).toBe(true);
    expect(r.settled).toBe(false);
    expect(r.outstanding).toEqual([
      { tx_id: '4', kind: 'bet', status: 'open' },
      { tx_id: '8', kind: 'bet', status: 'pending' },
    ]);
  });

  it('finds a doubled credit, a movement of an unknown bet and a broken account', async () => {
    await row(4, 'bet', 100, 'succeeded', 'won');
    await row(5, 'win', 250, 'succeeded', 'won');
    await movement(4, 'bet', 100, -100);
    await movement(5, 'win', 250, 250);
    await movement(5 + 4000, 'win', 250, 250); // another id, bet 4000 unknown to the platform
    await sql.unsafe(`update "${sandboxSchema}".accounts set balance_minor = balance_minor + 1`);
    const r = await run();
    expect(r.agreed).toBe(false);
    expect(r.unknown).toEqual(['4005']);
    expect(r.broken_accounts).toEqual(['u1/USD']);
    await sql.unsafe(`truncate "${sandboxSchema}".transactions, "${sandboxSchema}".accounts`);
    await movement(4, 'bet', 100, -100);
    await movement(5, 'win', 250, 250);
    await movement(7, 'rollback', 100, 100); // refunded although the bet counted and won
    expect((await run()).mismatches).toEqual([
      { bet_tx_id: '4', operator_minor: '250', platform_minor: '150' },
    ]);
  });
});
