/**
 * `npm run wallet:conformance` (scripts/wallet-conformance.ts), runnable in-process:
 *
 *   --operator <id>                          the operator's row in Postgres (DATABASE_URL, DATABASE_SCHEMA)
 *   --url <base> --secret <whsec_…> --form A|B [--preset seed|http-status|status-in-body]
 *     [--timeout-ms n] [--amount-format string|number] [--bet-path p] [--win-path p]
 *     [--rollback-path p] [--balance-path p]  an operator given here
 *   [--user id] [--currency code] [--session-token t]   the test player (default conformance-<random>, USD)
 *   [--row id]… (repeatable: only these rows)  [--json]
 *
 * Drives the operator's wallet through the rows of rows.ts and prints the report (report.ts).
 * Exit status: 0 every row passed; 1 a row failed, or the run could not start (database away);
 * 2 bad arguments (unknown option or row, malformed URL or secret, unknown operator or currency).
 */

import { Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import { readOperatorConfig } from '../../lib/db/operator-config.ts';
import { createSql, type Sql } from '../../lib/db/pool.ts';
import { type CallbackClient, createCallbackClient } from '../../lib/http/callback-client.ts';
import { ConformanceError } from '../../lib/wallet-conformance/errors.ts';
import { formatReport, reportJson } from '../../lib/wallet-conformance/report.ts';
import { ROW_IDS, type RowId } from '../../lib/wallet-conformance/rows.ts';
import { runConformance } from '../../lib/wallet-conformance/runner.ts';
import { DEFAULT_PATHS, type Target, testPlayer, urlOperator } from '../../lib/wallet-conformance/target.ts';
import { currencyTable } from '../../rules/money/currencies.ts';
import { ANSWER_PRESETS, type AnswerPreset } from '../../rules/wallet/answers.ts';
import { loadConformanceConfig } from './config.ts';

export interface CliIo {
  readonly out: (text: string) => void;
  readonly err: (text: string) => void;
}

export interface CliDeps {
  /** Settings (default: the environment). */
  readonly env?: Record<string, string | undefined>;
  /** Pool to read operators with instead of one built from the settings. */
  readonly sql?: Sql;
  /** Callback client instead of a fresh one. */
  readonly client?: CallbackClient;
}

/** A bad argument found after parsing (exit 2). */
class UsageError extends ConformanceError {
  declare readonly code: 'USAGE_INVALID';

  constructor(message: string) {
    super('USAGE_INVALID', message);
  }
}

const EXIT = { passed: 0, failed: 1, usage: 2 } as const;

function timeoutMs(v: string): number {
  const n = Number(v);
  if (!/^\d+$/.test(v) || n < 100 || n > 60_000)
    throw new InvalidArgumentError('whole ms from 100 to 60000 (as an operator row allows)');
  return n;
}

function path(v: string): string {
  if (!/^\/[^\s?#]*$/.test(v)) throw new InvalidArgumentError('a path starting with /');
  return v;
}

function row(v: string, previous: RowId[] = []): RowId[] {
  if (!(ROW_IDS as readonly string[]).includes(v))
    throw new InvalidArgumentError(`one of ${ROW_IDS.join(', ')}`);
  return [...previous, v as RowId];
}

interface Options {
  operator?: string;
  url?: string;
  secret?: string;
  form?: 'A' | 'B';
  preset: AnswerPreset;
  timeoutMs: number;
  amountFormat: 'string' | 'number';
  betPath: string;
  winPath: string;
  rollbackPath: string;
  balancePath: string;
  user?: string;
  currency: string;
  sessionToken?: string;
  row?: RowId[];
  json?: boolean;
}

const URL_ONLY = ['url', 'secret', 'form'] as const;
/** Options that describe an operator: --operator takes them from its row instead. */
const OPERATOR_OPTIONS = [
  ...URL_ONLY,
  'preset',
  'timeoutMs',
  'amountFormat',
  'betPath',
  'winPath',
  'rollbackPath',
  'balancePath',
] as const;

/** The operator of --url mode. @throws UsageError for a malformed or missing option. */
function fromOptions(o: Options) {
  const missing = URL_ONLY.filter((k) => o[k] === undefined);
  if (missing.length > 0)
    throw new UsageError(`--url needs ${missing.map((k) => `--${k}`).join(', ')} (or use --operator <id>)`);
  let url: URL;
  try {
    url = new URL(o.url as string);
  } catch {
    throw new UsageError(`--url ${o.url} is not a URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new UsageError('--url must be http(s)');
  if (!/^whsec_[A-Za-z0-9+/]+={0,2}$/.test(o.secret as string))
    throw new UsageError('--secret must be whsec_ followed by base64 (the Standard Webhooks secret)');
  return urlOperator({
    url: o.url as string,
    secret: o.secret as string,
    form: o.form as 'A' | 'B',
    preset: o.preset,
    timeoutMs: o.timeoutMs,
    amountFormat: o.amountFormat,
    paths: { bet: o.betPath, win: o.winPath, rollback: o.rollbackPath, balance: o.balancePath },
  });
}

/** Runs the command line `argv` (without node and script). @returns the exit status. */
export async function runConformanceCli(
  argv: readonly string[],
  io: CliIo,
  deps: CliDeps = {},
): Promise<number> {
  const program = new Command()
    .name('wallet-conformance')
    .description("Drive an operator's wallet through the platform's money rules with a test player")
    .option('--operator <id>', "the operator's row (Postgres: DATABASE_URL, DATABASE_SCHEMA)")
    .option('--url <base>', "the operator's callback base URL (instead of --operator)")
    .option('--secret <whsec>', 'its Standard Webhooks signing secret (with --url)')
    .addOption(new Option('--form <form>', 'its callback form (with --url)').choices(['A', 'B']))
    .addOption(new Option('--preset <preset>', 'its answer table').choices(ANSWER_PRESETS).default('seed'))
    .option('--timeout-ms <ms>', 'its callback timeout', timeoutMs, 10_000)
    .addOption(
      new Option('--amount-format <format>', 'amounts as').choices(['string', 'number']).default('string'),
    )
    .option('--bet-path <path>', 'bet callback path', path, DEFAULT_PATHS.bet)
    .option('--win-path <path>', 'win callback path (form A)', path, DEFAULT_PATHS.win)
    .option('--rollback-path <path>', 'rollback callback path (form A)', path, DEFAULT_PATHS.rollback)
    .option('--balance-path <path>', 'balance callback path', path, DEFAULT_PATHS.balance)
    .option('--user <id>', 'test player id (default conformance-<random>)')
    .option('--currency <code>', "test player's currency", 'USD')
    .option('--session-token <token>', 'session token the operator accepts for the test player')
    .option('--row <id>', `run only this row (repeatable): ${ROW_IDS.join(', ')}`, row)
    .option('--json', 'print the report as JSON')
    .exitOverride()
    .configureOutput({ writeOut: (s) => io.out(s.trimEnd()), writeErr: (s) => io.err(s.trimEnd()) });

  let sql: Sql | undefined;
  const client = deps.client ?? createCallbackClient(4);
  try {
    program.parse([...argv], { from: 'user' });
    const o = program.opts<Options>();
    const config = loadConformanceConfig(deps.env ?? process.env);
    const currencies = currencyTable(config.money.crypto);
    if (!currencies.isCurrency(o.currency))
      throw new UsageError(`--currency ${o.currency} is not a supported currency`);
    let target: Target;
    const player = testPlayer(o);
    if (o.operator !== undefined) {
      const given = OPERATOR_OPTIONS.filter((k) => program.getOptionValueSource(k) === 'cli');
      if (given.length > 0)
        throw new UsageError(
          `--operator takes its settings from its row; drop ${given.map((k) => `--${k.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`).join(', ')}`,
        );
      sql = deps.sql ?? createSql(config, { max: 1 });
      const operator = await readOperatorConfig(sql, o.operator);
      if (!operator) throw new UsageError(`no enabled operator ${o.operator}`);
      target = { operator, player };
    } else if (o.url !== undefined) {
      target = { operator: fromOptions(o), player };
    } else throw new UsageError('give --operator <id>, or --url with --secret and --form');
    const report = await runConformance(target, { client, currencies, ...(o.row ? { only: o.row } : {}) });
    io.out(o.json ? reportJson(report) : formatReport(report));
    return report.passed ? EXIT.passed : EXIT.failed;
  } catch (err) {
    if (err instanceof CommanderError) return err.exitCode === 0 ? EXIT.passed : EXIT.usage;
    if (err instanceof UsageError) {
      io.err(`wallet-conformance: ${err.message}`);
      return EXIT.usage;
    }
    io.err(`wallet-conformance: ${(err as Error).message}`);
    return EXIT.failed;
  } finally {
    if (!deps.client) client.close();
    if (sql && !deps.sql) await sql.end({ timeout: 5 });
  }
}
