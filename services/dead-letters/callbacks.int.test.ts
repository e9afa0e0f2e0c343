/**
 * `dead-letters callbacks list|show|redrive` in-process against real Postgres (a migrated schema of
 * its own with rows of every status): the table and JSON by each filter, an empty table with exit 0,
 * one callback in full with its bodies parsed, re-drives by filter or --all with a dry run and exit 1
 * when nothing matches, and every bad argument exit 2 naming the option with nothing changed.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Sql } from '../../lib/db/pool.ts';
import { callbackSet, startCallbackSchema, storedCallback } from '../../tests/support/wallet-callbacks.ts';
import { runDeadLettersCli } from './cli.ts';

const T0 = Date.UTC(2026, 0, 1, 12);
const NOW = T0 + 3_600_000;
const iso = (minutes: number) => new Date(T0 + minutes * 60_000).toISOString();
let db: Awaited<ReturnType<typeof startCallbackSchema>>;
let sql: Sql;

/** Runs the command line on this test's pool (or, with `env`, on one it builds); status and output. */
async function cli(argv: string[], env?: Record<string, string>) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runDeadLettersCli(
    argv,
    { out: (s) => out.push(s), err: (s) => err.push(s) },
    env ? { env: { ...process.env, ...env } } : { sql, now: () => NOW },
  );
  return { code, out: out.join('\n'), err: err.join('\n') };
}

/** The tx ids in the first column of a printed table, top to bottom. */
const tableIds = (text: string) => [...text.matchAll(/^│ (\d+) /gm)].map((m) => Number(m[1]));

const stored = () =>
  Promise.all([101, 103, 105, 107, 109, 111, 113, 115].map((id) => storedCallback(sql, id)));

beforeAll(async () => {
  db = await startCallbackSchema('t_dlcb', callbackSet(T0));
  sql = db.sql;
});

afterAll(async () => {
  await db?.close();
});

describe('callbacks list', () => {
  it('prints parked and retrying callbacks as a table, newest change first', async () => {
    const r = await cli(['callbacks', 'list']);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(
      /tx_id.*kind.*operator.*player.*status.*attempts.*next attempt.*last answer\/code.*updated/,
    );
    expect(tableIds(r.out)).toEqual([115, 105, 103, 101]);
    expect(r.out).toMatch(
      /│ 101 +│ win +│ op-1 +│ u-1 +│ parked +│ 17 +│ - +│ failed 500 +│ 2026-01-01T12:01:00Z/,
    );
    // A retrying callback shows when it is tried next.
    expect(r.out).toMatch(/│ 105 +│ win +│ op-2 +│ u-1 +│ retrying +│ 3 +│ 2026-01-01T12:30:00Z/);
    expect(r.out).toMatch(/4 callbacks$/);
  });

  it.each([
    [
      ['--status', 'parked'],
      [115, 103, 101],
    ],
    [['--status', 'retrying'], [105]],
    [['--status', 'done'], [111]],
    [
      ['--status', 'any', '--limit', '2'],
      [115, 113],
    ],
    [
      ['--operator', 'op-1'],
      [103, 101],
    ],
    [
      ['--player', 'u-1'],
      [105, 101],
    ],
    [['--operator', 'op-2', '--player', 'u-2'], [115]],
    [
      ['--tx-id', '101', '--tx-id', '115', '--tx-id', '111'],
      [115, 101],
    ],
    [
      ['--from', iso(3)],
      [115, 105],
    ],
    [
      ['--from', '2026-01-01', '--to', iso(3)],
      [103, 101],
    ],
    [
      ['--status', 'any', '--from', '2026-01-01T13:02:00+01:00', '--to', iso(6)],
      [109, 107, 105, 103],
    ],
  ])('%j', async (args, ids) => {
    const r = await cli(['callbacks', 'list', ...args]);
    expect(r.code, r.err).toBe(0);
    expect(tableIds(r.out)).toEqual(ids);
    const j = await cli(['callbacks', 'list', ...args, '--json']);
    expect((JSON.parse(j.out) as { tx_id: number }[]).map((c) => c.tx_id)).toEqual(ids);
  });

  it('JSON rows carry every list field with ISO times', async () => {
    const [c] = JSON.parse((await cli(['callbacks', 'list', '--tx-id', '101', '--json'])).out);
    expect(c).toMatchObject({
      tx_id: 101,
      kind: 'win',
      operator_id: 'op-1',
      user_id: 'u-1',
      status: 'parked',
      attempts: 17,
      updated_at: iso(1),
      last_answer: 'failed',
      last_code: '500',
      amount_minor: 2000,
      currency: 'EUR',
    });
  });

  it('nothing matching: an empty table, exit 0', async () => {
    const r = await cli(['callbacks', 'list', '--operator', 'op-9']);
    expect(r.code).toBe(0);
    expect(tableIds(r.out)).toEqual([]);
    expect(r.out).toContain('tx_id');
    expect(r.out).toMatch(/no callback matches --status waiting --operator op-9/);
    expect(JSON.parse((await cli(['callbacks', 'list', '--operator', 'op-9', '--json'])).out)).toEqual([]);
  });

  it('says when the limit cut the list', async () => {
    const r = await cli(['callbacks', 'list', '--limit', '2']);
    expect(tableIds(r.out)).toEqual([115, 105]);
    expect(r.out).toMatch(/2 shown, newest first; more may match/);
  });
});

describe('callbacks show', () => {
  it('prints every field, the request body and the answer parsed', async () => {
    const r = await cli(['callbacks', 'show', '101']);
    expect(r.code).toBe(0);
    expect(r.out).toContain('\n  "tx_id": 101,');
    expect(JSON.parse(r.out)).toMatchObject({
      tx_id: 101,
      bet_tx_id: 100,
      status: 'parked',
      player_key: 'op-1:u-1',
      lease_until: null,
      last_error: 'HTTP 500',
      last_request: { provider_tx_id: 101, amount: '20.00', currency: 'EUR' },
      last_response: { http_status: 500, body: { error: 'down' } },
      job: { kind: 'win', txId: 101, amountMinor: 2000, bet: { user_id: 'u-1', currency: 'EUR' } },
    });
  });

  it('an unknown tx id: exit 1; a malformed one: exit 2', async () => {
    const none = await cli(['callbacks', 'show', '999999']);
    expect(none.code).toBe(1);
    expect(none.err).toMatch(/NO_SUCH_CALLBACK: no callback with provider_tx_id 999999/);
    const bad = await cli(['callbacks', 'show', 'x1']);
    expect(bad.code).toBe(2);
    expect(bad.err).toMatch(/not a provider_tx_id: "x1"/);
  });
});

describe('callbacks redrive', () => {
  it('a dry run prints what would be re-driven and changes nothing', async () => {
    const before = await stored();
    const r = await cli(['callbacks', 'redrive', '--operator', 'op-1', '--dry-run']);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/^would re-drive 2 callbacks/);
    expect(tableIds(r.out)).toEqual([103, 101]);
    expect(await stored()).toEqual(before);
  });

  it('refuses without a selection or with --all and one (exit 2), and matches nothing with exit 1', async () => {
    const before = await stored();
    const cases: [string[], number, RegExp][] = [
      [
        [],
        2,
        /BAD_SELECTION: nothing selected: give --operator, --player, --tx-id, --from or --to, or --all/,
      ],
      [['--status', 'parked'], 2, /BAD_SELECTION: nothing selected/],
      [['--all', '--operator', 'op-1'], 2, /BAD_SELECTION: --all and --operator, .* exclude each other/],
      [['--status', 'done', '--tx-id', '111'], 2, /option '--status <status>' argument 'done' is invalid/],
      [
        ['--tx-id', '111'],
        1,
        /NOTHING_MATCHES: no parked or retrying callback matches --status waiting --tx-id 111/,
      ],
      [['--tx-id', '109', '--tx-id', '107', '--tx-id', '113'], 1, /NOTHING_MATCHES/],
      [['--operator', 'op-9'], 1, /NOTHING_MATCHES: .* --operator op-9/],
    ];
    for (const [args, code, message] of cases) {
      const r = await cli(['callbacks', 'redrive', ...args]);
      expect({ args, code: r.code }).toEqual({ args, code });
      expect(r.err).toMatch(message);
    }
    expect(await stored()).toEqual(before);
  });

  it('re-drives by player: due now with attempts from 0, prints them as they stood', async () => {
    const r = await cli(['callbacks', 'redrive', '--player', 'u-2', '--status', 'parked', '--json']);
    expect(r.code).toBe(0);
    const out = JSON.parse(r.out) as { dryRun: boolean; redriven: { tx_id: number; status: string }[] };
    expect(out.dryRun).toBe(false);
    expect(out.redriven.map((c) => [c.tx_id, c.status])).toEqual([
      [115, 'parked'],
      [103, 'parked'],
    ]);
    for (const id of [103, 115])
      expect(await storedCallback(sql, id)).toEqual({
        status: 'due',
        attempts: 0,
        next_attempt_at: NOW,
        updated_at: NOW,
      });
    expect(await storedCallback(sql, 101)).toMatchObject({ status: 'parked', attempts: 17 });
  });

  it('--all re-drives every waiting callback left, and never a done, skipped or in-flight one', async () => {
    const r = await cli(['callbacks', 'redrive', '--all']);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/^re-drove 2 callbacks, due now with attempts from 0/);
    expect(tableIds(r.out)).toEqual([105, 101]);
    expect(await storedCallback(sql, 109)).toMatchObject({ status: 'in_flight', attempts: 2 });
    expect(await storedCallback(sql, 111)).toMatchObject({ status: 'done' });
    expect(await storedCallback(sql, 113)).toMatchObject({ status: 'skipped' });
    const again = await cli(['callbacks', 'redrive', '--all']);
    expect(again.code).toBe(1);
    expect(again.err).toMatch(/NOTHING_MATCHES: no parked or retrying callback matches --status waiting$/);
  });
});

describe('callbacks: bad arguments and settings', () => {
  it.each([
    [['list', '--status', 'lost'], /option '--status <status>' argument 'lost' is invalid/],
    [['list', '--from', 'yesterday'], /option '--from <time>' argument 'yesterday' is invalid. an ISO 8601/],
    [['list', '--to', '2026-01-01T12:00:00'], /option '--to <time>' argument .* is invalid/],
    [['list', '--from', iso(5), '--to', iso(1)], /BAD_SELECTION: --from must be before --to/],
    [['list', '--limit', '0'], /option '--limit <n>' argument '0' is invalid. an integer from 1 to 1000/],
    [['list', '--limit', '1001'], /an integer from 1 to 1000/],
    [['list', '--tx-id', '-3'], /option '--tx-id <id>' argument '-3' is invalid/],
    [['list', '--operator', ''], /option '--operator <id>' argument '' is invalid. 1 to 128 characters/],
    [['list', '--player', 'p'.repeat(129)], /option '--player <user_id>' argument .* is invalid/],
    [['list', '--colour', 'red'], /unknown option '--colour'/],
    [['frob'], /unknown command 'frob'/],
    [['redrive', '--all', '--from', 'x'], /option '--from <time>'/],
  ])('%j → exit 2', async (args, message) => {
    const r = await cli(['callbacks', ...args]);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(message);
  });

  it('reads its own pool from the settings; a schema without the table or no database: exit 1', async () => {
    const own = await cli(['callbacks', 'list', '--status', 'any', '--json'], { DATABASE_SCHEMA: db.schema });
    expect(own.code).toBe(0);
    expect(JSON.parse(own.out)).toHaveLength(8);
    const empty = await cli(['callbacks', 'list'], { DATABASE_SCHEMA: 'no_such_schema_here' });
    expect(empty.code).toBe(1);
    expect(empty.err).toMatch(
      /DATABASE_UNREACHABLE: no wallet_callbacks table in .* schema no_such_schema_here/,
    );
    const away = await cli(['callbacks', 'list'], {
      DATABASE_URL: 'postgres://casino:casino@127.0.0.1:1/casino',
    });
    expect(away.code).toBe(1);
    expect(away.err).toMatch(/DATABASE_UNREACHABLE: cannot reach Postgres at 127.0.0.1:1/);
  });
});
