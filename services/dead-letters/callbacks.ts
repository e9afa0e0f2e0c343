/**
 * `dead-letters callbacks list|show|redrive`: the wallet saga's parked and
 * retrying operator callbacks, which live in Postgres (`wallet_callbacks`, lib/db/wallet-callbacks.ts),
 * not on a topic.
 *
 *   list    [filters] [--limit n] [--json]          a table, newest change first (exit 0, empty or not)
 *   show    <tx_id>                                 every field, bodies as pretty JSON (exit 1: none)
 *   redrive <filters> | --all [--status s] [--limit n] [--dry-run] [--json]
 *           due now with a fresh schedule; exit 1 when nothing parked or retrying matches
 *
 * Filters: --status, --operator, --player, --tx-id (repeatable), --from, --to (ISO 8601, the last
 * change of the callback, `to` excluded). A re-drive needs one of operator, player, tx id or time,
 * or `--all` (a status alone is not a selection). Bad arguments exit 2 naming the option.
 */
import { type Command, Option } from 'commander';
import type { Sql } from '../../lib/db/pool.ts';
import {
  CALLBACK_LIMITS,
  CALLBACK_STATUS_FILTERS,
  type CallbackFilter,
  type CallbackStatusFilter,
  callbackJson,
  getCallback,
  hasSelection,
  listCallbacks,
  REDRIVE_STATUSES,
  redriveCallbacks,
} from '../../lib/db/wallet-callbacks.ts';
import { DeadLetterError } from '../../lib/dead-letters/errors.ts';
import { intIn, isoTime, oneTxId, textOf, txId } from './args.ts';
import { callbackTable, showCallback } from './callbacks-format.ts';

export interface CallbacksContext {
  readonly out: (text: string) => void;
  /** The pool on the saga's schema (built on first use). */
  readonly sql: () => Sql;
  /** Clock of a re-drive, Unix ms. */
  readonly now: () => number;
}

/** The filter options as commander gives them. */
interface FilterOptions {
  readonly status?: CallbackStatusFilter;
  readonly operator?: string;
  readonly player?: string;
  readonly txId?: number[];
  readonly from?: number;
  readonly to?: number;
  readonly limit?: number;
  readonly json?: boolean;
}

const ID_MAX = 128;

function withFilters(cmd: Command, statuses: readonly string[], defaultLimit: number): Command {
  return cmd
    .addOption(
      new Option('--status <status>', 'which callbacks (waiting = parked or retrying)')
        .choices(statuses)
        .default('waiting'),
    )
    .option('--operator <id>', 'of this operator', textOf(ID_MAX))
    .option('--player <user_id>', 'of this player (user_id, any operator unless --operator)', textOf(ID_MAX))
    .option('--tx-id <id>', 'this provider_tx_id (repeatable)', txId)
    .option(
      '--from <time>',
      'last change at or after (ISO 8601: 2026-01-31 or 2026-01-31T12:00:00Z)',
      isoTime,
    )
    .option('--to <time>', 'last change before (ISO 8601)', isoTime)
    .option(
      '--limit <n>',
      `at most n, newest change first (1..${CALLBACK_LIMITS.max}, default ${defaultLimit})`,
      intIn(1, CALLBACK_LIMITS.max),
    )
    .option('--json', 'print JSON');
}

/** The filter of `o`. @throws DeadLetterError BAD_SELECTION when --from is not before --to. */
function filterOf(o: FilterOptions): CallbackFilter {
  if (o.from !== undefined && o.to !== undefined && o.from >= o.to)
    throw new DeadLetterError('BAD_SELECTION', '--from must be before --to');
  return {
    ...(o.status ? { status: o.status } : {}),
    ...(o.operator ? { operatorId: o.operator } : {}),
    ...(o.player ? { userId: o.player } : {}),
    ...(o.txId ? { txIds: o.txId } : {}),
    ...(o.from !== undefined ? { from: o.from } : {}),
    ...(o.to !== undefined ? { to: o.to } : {}),
    ...(o.limit !== undefined ? { limit: o.limit } : {}),
  };
}

/** The options of `f` as typed, for messages. */
function describe(f: CallbackFilter): string {
  const iso = (ms: number) => new Date(ms).toISOString();
  return [
    `--status ${f.status ?? 'waiting'}`,
    ...(f.operatorId ? [`--operator ${f.operatorId}`] : []),
    ...(f.userId ? [`--player ${f.userId}`] : []),
    ...(f.txIds ?? []).map((t) => `--tx-id ${t}`),
    ...(f.from !== undefined ? [`--from ${iso(f.from)}`] : []),
    ...(f.to !== undefined ? [`--to ${iso(f.to)}`] : []),
  ].join(' ');
}

const json = (v: unknown) => JSON.stringify(v, null, 2);

/** Registers the `callbacks` command group on `program`. */
export function addCallbackCommands(program: Command, ctx: CallbacksContext): void {
  const group = program
    .command('callbacks')
    .description("the wallet saga's parked and retrying operator callbacks (Postgres wallet_callbacks)");

  withFilters(
    group.command('list').description('callbacks matching the filters, newest change first'),
    CALLBACK_STATUS_FILTERS,
    CALLBACK_LIMITS.list,
  ).action(async (o: FilterOptions) => {
    const f = filterOf(o);
    const rows = await listCallbacks(ctx.sql(), f);
    if (o.json) return ctx.out(json(rows.map(callbackJson)));
    ctx.out(callbackTable(rows));
    const limit = f.limit ?? CALLBACK_LIMITS.list;
    if (rows.length === 0) ctx.out(`no callback matches ${describe(f)}`);
    else if (rows.length === limit)
      ctx.out(`${limit} shown, newest first; more may match (--limit, or narrow the filters)`);
    else ctx.out(`${rows.length} callback${rows.length === 1 ? '' : 's'}`);
  });

  group
    .command('show')
    .description('one callback: every field, its last request and answer as pretty JSON')
    .argument('<tx_id>', 'provider_tx_id', (v) => oneTxId(v))
    .action(async (id: number) => {
      const c = await getCallback(ctx.sql(), id);
      if (!c) throw new DeadLetterError('NO_SUCH_CALLBACK', `no callback with provider_tx_id ${id}`);
      ctx.out(showCallback(c));
    });

  withFilters(
    group
      .command('redrive')
      .description('make parked or retrying callbacks due now with a fresh retry schedule'),
    REDRIVE_STATUSES,
    CALLBACK_LIMITS.max,
  )
    .option('--all', 'every parked or retrying callback (of --status), no other filter')
    .option('--dry-run', 'list what would be re-driven; change nothing')
    .action(async (o: FilterOptions & { all?: boolean; dryRun?: boolean }) => {
      const f = filterOf(o);
      if (o.all && hasSelection(f))
        throw new DeadLetterError(
          'BAD_SELECTION',
          '--all and --operator, --player, --tx-id, --from or --to exclude each other',
        );
      if (!o.all && !hasSelection(f))
        throw new DeadLetterError(
          'BAD_SELECTION',
          'nothing selected: give --operator, --player, --tx-id, --from or --to, or --all',
        );
      const dryRun = o.dryRun === true;
      const done = await redriveCallbacks(ctx.sql(), f, ctx.now(), dryRun);
      if (done.length === 0)
        throw new DeadLetterError('NOTHING_MATCHES', `no parked or retrying callback matches ${describe(f)}`);
      if (o.json) return ctx.out(json({ dryRun, redriven: done.map(callbackJson) }));
      const n = `${done.length} callback${done.length === 1 ? '' : 's'}`;
      ctx.out(
        dryRun
          ? `would re-drive ${n} (as they stand now):`
          : `re-drove ${n}, due now with attempts from 0 (as they stood):`,
      );
      ctx.out(callbackTable(done));
      if (done.length === (f.limit ?? CALLBACK_LIMITS.max))
        ctx.out(`at most ${done.length} at a time: run it again for the rest`);
    });
}
