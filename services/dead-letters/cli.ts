/**
 * `npm run dead-letters -- list|show|replay|callbacks` (scripts/dead-letters.ts), runnable in-process:
 *
 *   list   [topic...] [--limit n] [--json]     per topic and partition: offsets, reason, source, replays
 *   show   <topic> <partition:offset>           one record: headers, key, decoded value (JSON)
 *   replay <topic> --all | [--offset p:o]... [--tx-id n]... [--reason regex] [--dry-run] [--force]
 *   callbacks list|show|redrive …              the saga's parked and retrying callbacks (callbacks.ts)
 *
 * Topics: `rounds` (rounds.dead-letter) and `wallet` (wallet-transactions.dead-letter): records their
 * consumers could not decode or write. Parked callbacks are rows in Postgres: `callbacks`.
 * Exit status: 0 done; 1 refused or failed (nothing matches, offset out of range, no such callback,
 * broker or database away…); 2 bad arguments (unknown command, topic or option, malformed value).
 */
import { Command, CommanderError, InvalidArgumentError } from 'commander';
import type { Kafka } from 'kafkajs';
import { createSql, isConnectionError, type Sql } from '../../lib/db/pool.ts';
import { DeadLetterError } from '../../lib/dead-letters/errors.ts';
import { formatList, listDeadLetters, showDeadLetter } from '../../lib/dead-letters/inspect.ts';
import { describeSelection, replayDeadLetters } from '../../lib/dead-letters/replay.ts';
import { createKafka } from '../../lib/log/kafka.ts';
import { createLogger, type Logger } from '../../lib/logger.ts';
import { pattern, position, txId } from './args.ts';
import { addCallbackCommands } from './callbacks.ts';
import { type DeadLettersConfig, loadDeadLettersConfig } from './config.ts';

export interface CliIo {
  readonly out: (text: string) => void;
  readonly err: (text: string) => void;
}

export interface CliDeps {
  /** Settings (default: the environment). */
  readonly env?: Record<string, string | undefined>;
  /** Client to use instead of one built from the settings. */
  readonly kafka?: Kafka;
  /** Pool to use instead of one built from the settings (left open). */
  readonly sql?: Sql;
  /** Clock of `callbacks redrive`, Unix ms (default Date.now). */
  readonly now?: () => number;
  readonly logger?: Logger;
}

const USAGE_CODES = new Set(['UNKNOWN_TOPIC', 'BAD_SELECTION']);

/**
 * A Postgres failure as the refusal it means: the database away, or a schema without the saga's
 * table (wrong DATABASE_SCHEMA, or migrations never ran there).
 */
function databaseRefusal(err: unknown, config: DeadLettersConfig | undefined): DeadLetterError | undefined {
  const where = config ? `${new URL(config.db.url).host} schema ${config.db.schema}` : 'DATABASE_URL';
  if (isConnectionError(err))
    return new DeadLetterError('DATABASE_UNREACHABLE', `cannot reach Postgres at ${where}`, { cause: err });
  if ((err as { code?: string }).code === '42P01')
    return new DeadLetterError(
      'DATABASE_UNREACHABLE',
      `no wallet_callbacks table in ${where} (DATABASE_SCHEMA; has the wallet saga run there?)`,
      { cause: err },
    );
  return undefined;
}

const json = (v: unknown) => JSON.stringify(v, (_k, x) => (typeof x === 'bigint' ? String(x) : x), 2);

/** Runs the command line `argv` (without node and script). @returns the exit status. */
export async function runDeadLettersCli(
  argv: readonly string[],
  io: CliIo,
  deps: CliDeps = {},
): Promise<number> {
  let config: DeadLettersConfig | undefined;
  let kafka: Kafka | undefined = deps.kafka;
  const logger = deps.logger ?? createLogger('dead-letters', 'warn');
  let ownSql: Sql | undefined;
  const settings = () => {
    config ??= loadDeadLettersConfig(deps.env ?? process.env);
    return config;
  };
  const client = () => {
    const c = settings();
    kafka ??= createKafka(c, 'dead-letters', logger);
    return { config: c, kafka };
  };
  let usedSql = false;
  const sql = () => {
    usedSql = true;
    if (deps.sql) return deps.sql;
    ownSql ??= createSql(settings(), { max: 2 });
    return ownSql;
  };
  const program = new Command()
    .name('dead-letters')
    .description(
      "List, inspect and replay the dead-letter topics (rounds, wallet) and the wallet saga's parked callbacks",
    )
    .exitOverride()
    .configureOutput({ writeOut: (s) => io.out(s.trimEnd()), writeErr: (s) => io.err(s.trimEnd()) });

  program
    .command('list')
    .description(
      'per topic and partition: retained offsets, and each record with its reason, source and replays',
    )
    .argument('[topic...]', 'rounds, wallet (default: both)')
    .option('--limit <n>', 'newest records per partition', (v) => {
      if (!/^\d+$/.test(v) || Number(v) < 1) throw new InvalidArgumentError('a positive integer');
      return Number(v);
    })
    .option('--json', 'print JSON')
    .action(async (topics: string[], o: { limit?: number; json?: boolean }) => {
      const { config: c, kafka: k } = client();
      const listings = await listDeadLetters(k, c, topics, o.limit);
      io.out(o.json ? json(listings) : formatList(listings));
    });

  program
    .command('show')
    .description('one record: headers, key and the decoded value where it decodes')
    .argument('<topic>', 'rounds or wallet')
    .argument('<partition:offset>', 'e.g. 0:12', (v) => position(v)[0])
    .action(async (topic: string, at: { partition: number; offset: bigint }) => {
      const { config: c, kafka: k } = client();
      io.out(json(await showDeadLetter(k, c, topic, at.partition, at.offset)));
    });

  program
    .command('replay')
    .description('re-append selected records to their source topic, once each (ledger: dead-letters.replays)')
    .argument('<topic>', 'rounds or wallet')
    .option('--all', 'every record not replayed yet')
    .option('--offset <partition:offset>', 'this record (repeatable)', position)
    .option('--tx-id <id>', 'records of this provider_tx_id (wallet; repeatable)', txId)
    .option('--reason <regex>', 'records whose reason matches (case-insensitive)', pattern)
    .option('--dry-run', 'show what would be replayed; append nothing')
    .option('--force', 'also records replayed before or that still do not decode')
    .option('--json', 'print JSON')
    .action(async (topic: string, o: Record<string, unknown>) => {
      const { config: c, kafka: k } = client();
      const selection = {
        ...(o.all ? { all: true } : {}),
        ...(o.offset ? { offsets: o.offset as { partition: number; offset: bigint }[] } : {}),
        ...(o.txId ? { txIds: o.txId as number[] } : {}),
        ...(o.reason ? { reason: o.reason as RegExp } : {}),
      };
      const r = await replayDeadLetters({
        config: c,
        kafka: k,
        logger,
        topic,
        selection,
        dryRun: o.dryRun === true,
        force: o.force === true,
      });
      if (o.json) return io.out(json(r));
      const verb = r.dryRun ? 'would replay' : 'replayed';
      io.out(
        `${r.topic} ${describeSelection(selection)}: ${r.matched} matched; ${verb} ${r.replayed.length} to ${r.target}`,
      );
      for (const x of r.replayed)
        io.out(`  ${verb} ${x.partition}:${x.offset}${x.to ? ` -> ${x.to.partition}:${x.to.offset}` : ''}`);
      for (const x of r.alreadyReplayed)
        io.out(
          `  skipped ${x.partition}:${x.offset}: replayed at ${new Date(x.at).toISOString()} (--force to replay again)`,
        );
      for (const x of r.undecodable)
        io.out(
          `  skipped ${x.partition}:${x.offset}: still does not decode (${x.reason}) (--force to replay anyway)`,
        );
    });

  addCallbackCommands(program, { out: io.out, sql, now: deps.now ?? Date.now });

  try {
    await program.parseAsync([...argv], { from: 'user' });
    return 0;
  } catch (caught) {
    const err = (usedSql && databaseRefusal(caught, config)) || caught;
    if (err instanceof CommanderError) return err.exitCode === 0 ? 0 : 2;
    if (err instanceof DeadLetterError) {
      io.err(`dead-letters: ${err.code}: ${err.message}`);
      return USAGE_CODES.has(err.code) ? 2 : 1;
    }
    io.err(`dead-letters: ${(err as Error).stack ?? String(err)}`);
    return 1;
  } finally {
    await ownSql?.end({ timeout: 5 });
  }
}
