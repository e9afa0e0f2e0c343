/**
 * The wallet conformance kit (lib/wallet-conformance, its command line services/wallet-conformance) against a real operator
 * sandbox listening on a socket: a clean sandbox passes every row on both forms; with one quirk on
 * (services/operator-sandbox/quirks.ts) exactly the row of that rule fails. The command line:
 * --url and --operator (an `operators` row in a platform schema of its own) and its exit statuses.
 */
import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate } from '../../lib/db/migrate.ts';
import { createSql, type Sql } from '../../lib/db/pool.ts';
import { createCallbackClient } from '../../lib/http/callback-client.ts';
import type { RowId } from '../../lib/wallet-conformance/rows.ts';
import { runConformance } from '../../lib/wallet-conformance/runner.ts';
import { testPlayer, urlOperator } from '../../lib/wallet-conformance/target.ts';
import { currencyTable } from '../../rules/money/currencies.ts';
import type { AnswerPreset } from '../../rules/wallet/answers.ts';
import type { Quirk } from '../../services/operator-sandbox/quirks.ts';
import { runConformanceCli } from '../../services/wallet-conformance/cli.ts';
import { startTestSandbox, type TestSandbox } from '../support/sandbox.ts';

/** The operator's timeout in these runs, and how late `slow-answers` answers (above it). */
const TIMEOUT_MS = 400;
const SLOW_MS = 500;

/** Each quirk and the one row it must fail. */
const BROKEN: readonly [Quirk, RowId][] = [
  ['debit-duplicates', 'bet-replay'],
  ['ignore-amount-on-replay', 'bet-other-amount'],
  ['accept-late-bet', 'rollback-before-bet'],
  ['refund-unknown-rollback', 'rollback-unknown'],
  ['credit-after-rollback', 'win-after-rollback'],
  ['refund-after-win', 'rollback-after-win'],
  ['no-insufficient-funds-check', 'bet-over-balance'],
  ['accept-any-signature', 'signature'],
  ['slow-answers', 'timeout'],
];

let sbx: TestSandbox;
let base: string;
const client = createCallbackClient(4);
const currencies = currencyTable();

async function quirks(list: Quirk[]): Promise<void> {
  const res = await sbx.app.inject({
    method: 'PUT',
    url: '/_sandbox/quirks',
    headers: { 'content-type': 'application/json' },
    payload: JSON.stringify({ quirks: list, slowMs: SLOW_MS }),
  });
  expect(res.statusCode).toBe(200);
}

const run = (form: 'A' | 'B', preset: AnswerPreset = 'seed', only?: RowId[]) =>
  runConformance(
    {
      operator: urlOperator({
        url: base,
        secret: sbx.secret,
        form,
        preset,
        timeoutMs: TIMEOUT_MS,
        amountFormat: 'string',
        paths: {
          bet: '/wallet/bet',
          win: '/wallet/win',
          rollback: '/wallet/rollback',
          balance: '/wallet/balance',
        },
      }),
      player: testPlayer({}),
    },
    { client, currencies, ...(only ? { only } : {}) },
  );

const failedRows = (r: Awaited<ReturnType<typeof run>>) => r.rows.filter((x) => !x.pass).map((x) => x.id);

beforeAll(async () => {
  sbx = await startTestSandbox();
  await sbx.app.listen({ host: '127.0.0.1', port: 0 });
  base = `http://127.0.0.1:${(sbx.app.server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  client.close();
  await sbx?.close();
});

describe('a clean sandbox', () => {
  it.each(['A', 'B'] as const)('passes every row on form %s, each exchange recorded', async (form) => {
    await quirks([]);
    const r = await run(form);
    expect(failedRows(r), JSON.stringify(r.rows.filter((x) => !x.pass))).toEqual([]);
    expect(r.passed).toBe(true);
    expect(r.rows).toHaveLength(11);
    const bet = r.rows.find((x) => x.id === 'bet');
    expect(bet?.exchanges.map((x) => x.step)).toEqual([
      'balance before the bet',
      'bet',
      'balance after the bet',
    ]);
    expect(bet?.exchanges[1]).toMatchObject({
      request: { method: 'POST', signing: 'valid', body: { action: 'bet', amount: '1.00' } },
      answer: { status: 200 },
      class: 'ok',
    });
  });
});

describe('a run with a deadline', () => {
  it('starts no row after it: every row left fails as not run, with no exchange', async () => {
    await quirks([]);
    const r = await runConformance(
      {
        operator: urlOperator({
          url: base,
          secret: sbx.secret,
          form: 'A',
          preset: 'seed',
          timeoutMs: TIMEOUT_MS,
          amountFormat: 'string',
          paths: {
            bet: '/wallet/bet',
            win: '/wallet/win',
            rollback: '/wallet/rollback',
            balance: '/wallet/balance',
          },
        }),
        player: testPlayer({}),
      },
      { client, currencies, deadlineAt: Date.now() },
    );
    expect(r.passed).toBe(false);
    expect(r.rows).toHaveLength(11);
    for (const row of r.rows) {
      expect(row.pass).toBe(false);
      expect(row.detail).toMatch(/^not run: the run's time limit/);
      expect(row.exchanges).toEqual([]);
    }
  });
});

describe('a sandbox with one quirk', () => {
  it('takes quirks by name through its admin API and refuses unknown ones', async () => {
    const put = (payload: unknown) =>
      sbx.app.inject({
        method: 'PUT',
        url: '/_sandbox/quirks',
        headers: { 'content-type': 'application/json' },
        payload: JSON.stringify(payload),
      });
    expect((await put({ quirks: ['made-up'] })).statusCode).toBe(400);
    expect((await put({ quirks: ['refund-after-win'], slowMs: 5 })).json()).toEqual({
      quirks: ['refund-after-win'],
      slowMs: 5,
    });
    expect((await sbx.app.inject({ method: 'DELETE', url: '/_sandbox/quirks' })).json()).toMatchObject({
      quirks: [],
    });
  });

  it.each(BROKEN)('%s fails exactly the %s row', async (quirk, row) => {
    await quirks([quirk]);
    try {
      const r = await run('A');
      expect(failedRows(r), JSON.stringify(r.rows.filter((x) => !x.pass))).toEqual([row]);
    } finally {
      await quirks([]);
    }
  });
});

describe('a strict sandbox (exact bodies, status in the body)', () => {
  it.each(['A', 'B'] as const)('passes every row on form %s read as status-in-body', async (form) => {
    expect((await sbx.put('/_sandbox/mode', { strict: true })).status).toBe(200);
    try {
      const r = await run(form, 'status-in-body');
      expect(failedRows(r), JSON.stringify(r.rows.filter((x) => !x.pass))).toEqual([]);
      const replay = r.rows
        .find((x) => x.id === 'bet-replay')
        ?.exchanges.find((x) => x.step === 'same bet again');
      expect(replay).toMatchObject({ class: 'duplicate', answer: { status: 200 } });
    } finally {
      await sbx.app.inject({ method: 'DELETE', url: '/_sandbox/mode' });
    }
  });
});

describe('answers checked against their schemas (schemas/callbacks)', () => {
  it('an ok answer with a field the seed does not list fails its row, naming the schema and the field', async () => {
    await quirks(['extra-answer-field']);
    try {
      const r = await run('B', 'seed', ['balance', 'rollback-unknown']);
      expect(failedRows(r)).toEqual(['balance', 'rollback-unknown']);
      expect(r.rows[0]?.detail).toMatch(
        /does not match schemas\/callbacks\/balance\.response\.json: body has the unknown field bonus_balance/,
      );
      expect(r.rows[1]?.detail).toMatch(/schemas\/callbacks\/rollback\.response\.json/);
      expect(r.rows[1]?.exchanges.find((x) => x.step === 'rollback')?.schema).toMatchObject({
        name: 'rollback',
        problems: ['body has the unknown field bonus_balance'],
      });
    } finally {
      await quirks([]);
    }
  });

  it('a clean answer is checked and passes', async () => {
    const r = await run('A', 'seed', ['bet']);
    expect(r.rows[0]?.exchanges.map((x) => x.schema)).toEqual([
      { name: 'balance', problems: [] },
      { name: 'bet', problems: [] },
      { name: 'balance', problems: [] },
    ]);
  });
});

describe('the command line', () => {
  const schema = `t_conf_${randomBytes(4).toString('hex')}`;
  let sql: Sql;
  const out: string[] = [];
  const err: string[] = [];
  const io = { out: (s: string) => out.push(s), err: (s: string) => err.push(s) };
  const cli = (argv: string[]) =>
    runConformanceCli(argv, io, {
      env: { ...process.env, DATABASE_SCHEMA: schema, LOG_LEVEL: 'silent' },
      sql,
    });

  beforeAll(async () => {
    sql = createSql(
      { db: { url: process.env.DATABASE_URL ?? '', schema, poolMax: 2, stallMs: 5_000 } },
      { max: 2 },
    );
    await migrate(sql, schema);
    await sql`insert into operators (operator_id, name, token_hash, callback_form, base_url, bet_path, win_path,
                balance_path, rollback_path, signing_secret, timeout_ms, retry_policy, answer_table)
              values ('opr_conf', 'Conformance', ${randomBytes(16).toString('hex')}, 'B', ${`${base}/`},
                '/wallet/bet', '/wallet/win', '/wallet/balance', '/wallet/rollback', ${sbx.secret}, 2000,
                ${sql.json({ delaysMs: [5000] })}, ${sql.json('seed')})`;
  });

  afterAll(async () => {
    await sql.unsafe(`drop schema if exists "${schema}" cascade`);
    await sql.end({ timeout: 5 });
  });

  it('--url prints the table and exits 0 when every row passes', async () => {
    out.length = 0;
    const code = await cli(['--url', base, '--secret', sbx.secret, '--form', 'A', '--timeout-ms', '2000']);
    const text = out.join('\n');
    expect(code, text).toBe(0);
    expect(text).toMatch(/11 of 11 rows passed/);
    expect(text).toMatch(/signature verification/);
  });

  it('--operator reads the row (form B, its secret and timeout) and --json gives the report', async () => {
    out.length = 0;
    const code = await cli([
      '--operator',
      'opr_conf',
      '--row',
      'balance',
      '--row',
      'win-after-rollback',
      '--json',
    ]);
    expect(code, out.join('\n')).toBe(0);
    const report = JSON.parse(out.join('\n'));
    expect(report.operator).toMatchObject({ id: 'opr_conf', form: 'B', timeout_ms: 2000, preset: 'seed' });
    expect(report.rows.map((r: { id: string }) => r.id)).toEqual(['balance', 'win-after-rollback']);
    const win = report.rows[1].exchanges.find((x: { step: string }) => x.step === 'win');
    expect(win.request).toMatchObject({ method: 'GET', url: `${base}/webhooks/platform/rewards` });
  });

  it('exits 1 when a row fails', async () => {
    await quirks(['refund-after-win']);
    try {
      expect(await cli(['--operator', 'opr_conf', '--row', 'rollback-after-win'])).toBe(1);
      expect(out.join('\n')).toMatch(/0 of 1 rows passed; failed: rollback-after-win/);
    } finally {
      await quirks([]);
    }
  });

  it.each([
    [['--operator', 'opr_nobody']],
    [['--url', 'http://127.0.0.1:1', '--form', 'A']],
    [['--url', 'http://127.0.0.1:1', '--secret', 'nope', '--form', 'A']],
    [['--operator', 'opr_conf', '--form', 'A']],
    [['--operator', 'opr_conf', '--row', 'nonsense']],
    [['--operator', 'opr_conf', '--currency', 'XYZ']],
    [['--bogus']],
    [[]],
  ])('exits 2 on bad arguments: %j', async (argv) => {
    err.length = 0;
    expect(await cli(argv)).toBe(2);
    expect(err.join('\n')).not.toBe('');
  });
});
