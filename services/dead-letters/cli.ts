/**
 * `npm run dead-letters -- list|show|replay` (scripts/dead-letters.ts), runnable in-process:
 *
 *   list   [topic...] [--limit n] [--json]     per topic and partition: offsets, reason, source, replays
 *   show   <topic> <partition:offset>           one record: headers, key, decoded value (JSON)
 *   replay <topic> --all | [--offset p:o]... [--tx-id n]... [--reason regex] [--dry-run] [--force]
 *
 * Topics: `rounds` (rounds.dead-letter) and `wallet` (wallet-transactions.dead-letter).
 * Exit status: 0 done; 1 refused or failed (nothing matches, offset out of range, broker away…);
 * 2 bad arguments (unknown command, topic or option, malformed offset or pattern).
 */
import { Command, CommanderError, InvalidArgumentError } from 'commander';
import type { Kafka } from 'kafkajs';
import { createKafka } from '../../lib/log/kafka.ts';
import { createLogger, type Logger } from '../../lib/logger.ts';
import { type DeadLettersConfig, loadDeadLettersConfig } from './config.ts';
import { DeadLetterError } from './errors.ts';
import { formatList, listDeadLetters, showDeadLetter } from './inspect.ts';
import { describeSelection, replayDeadLetters } from './replay.ts';

export interface CliIo {
  readonly out: (text: string) => void;
  readonly err: (text: string) => void;
}

export interface CliDeps {
  /** Settings (default: the environment). */
  readonly env?: Record<string, string | undefined>;
  /** Client to use instead of one built from the settings. */
  readonly kafka?: Kafka;
  readonly logger?: Logger;
}

const USAGE_CODES = new Set(['UNKNOWN_TOPIC', 'BAD_SELECTION']);

function position(v: string, previous: { partition: number; offset: bigint }[] = []) {
  const m = /^(\d{1,5}):(\d{1,19})$/.exec(v);
  if (!m) throw new InvalidArgumentError(`expected partition:offset, e.g. 0:12; got "${v}"`);
  return [...previous, { partition: Number(m[1]), offset: BigInt(m[2] as string) }];
}

function txId(v: string, previous: number[] = []) {
  if (!/^\d{1,16}$/.test(v) || !Number.isSafeInteger(Number(v)))
    throw new InvalidArgumentError(`not a provider_tx_id: "${v}"`);
  return [...previous, Number(v)];
}

function pattern(v: string) {
  try {
    return new RegExp(v, 'i');
  } catch (err) {
    throw new InvalidArgumentError(`not a regular expression: ${(err as Error).message}`);
  }
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
  const client = () => {
    config ??= loadDeadLettersConfig(deps.env ?? process.env);
    kafka ??= createKafka(config, 'dead-letters', logger);
    return { config, kafka };
  };
  const program = new Command()
    .name('dead-letters')
    .description('List, inspect and replay the dead-letter topics (rounds, wallet)')
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

  try {
    await program.parseAsync([...argv], { from: 'user' });
    return 0;
  } catch (err) {
    if (err instanceof CommanderError) return err.exitCode === 0 ? 0 : 2;
    if (err instanceof DeadLetterError) {
      io.err(`dead-letters: ${err.code}: ${err.message}`);
      return USAGE_CODES.has(err.code) ? 2 : 1;
    }
    io.err(`dead-letters: ${(err as Error).stack ?? String(err)}`);
    return 1;
  }
}
