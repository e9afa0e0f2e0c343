/**
 * `npm run rebuild -- <read-model> [options]` (scripts/rebuild.ts), runnable in-process: rebuilds a
 * read model (rounds, api-keys, wallet) from the log into shadow tables and swaps them in with no
 * downtime (rebuild.ts). Progress and the outcome go to `io.stderr` (a bar on a terminal, plain
 * lines otherwise); a JSON summary goes to `io.out`. Exit status: 0 when swapped (or, with
 * --no-swap, checked) and identical, or different with --accept-differences; 1 on an error or
 * differences; 2 on bad arguments.
 */
import { Argument, Command, CommanderError, InvalidArgumentError } from 'commander';
import type { Kafka } from 'kafkajs';
import { pino } from 'pino';
import { createSql, type Sql } from '../../../lib/db/pool.ts';
import { createKafka } from '../../../lib/log/kafka.ts';
import { createLogger, type Logger } from '../../../lib/logger.ts';
import type { Comparison } from '../../../lib/rebuild/compare.ts';
import { RebuildError } from '../../../lib/rebuild/errors.ts';
import { READ_MODELS } from '../../../lib/rebuild/models.ts';
import { rebuildReadModel } from '../../../lib/rebuild/rebuild.ts';
import { loadProjectorConfig, type ProjectorConfig } from '../config.ts';
import { createProgressPrinter, type ProgressStream } from './progress.ts';

export interface RebuildCliIo {
  /** The JSON summary. */
  readonly out: (text: string) => void;
  /** Progress and the readable outcome. */
  readonly stderr: ProgressStream;
}

export interface RebuildCliDeps {
  readonly env?: Record<string, string | undefined>;
  readonly kafka?: Kafka;
  readonly sql?: Sql;
  readonly logger?: Logger;
}

const atLeast = (min: number) => (v: string) => {
  const n = Number(v);
  if (!/^\d+$/.test(v) || n < min) throw new InvalidArgumentError(`an integer >= ${min}`);
  return n;
};

function program(io: RebuildCliIo): Command {
  return new Command()
    .name('rebuild')
    .description('Rebuild a read model from the log into shadow tables and swap them in with no downtime')
    .addArgument(new Argument('<read-model>', 'the read model').choices([...READ_MODELS.keys()]))
    .option('--no-swap', 'build and compare with the live tables only; change nothing live')
    .option('--accept-differences', 'swap even when the rebuilt tables differ from the live ones')
    .option('--lock-timeout-ms <ms>', 'longest wait for the swap lock per attempt', atLeast(10), 2000)
    .option('--lock-attempts <n>', 'attempts at the swap lock', atLeast(1), 5)
    .option(
      '--swap-lag <records>',
      'swap once the live projector is at most this far ahead',
      atLeast(0),
      1000,
    )
    .option('--verbose', 'log at LOG_LEVEL (default: warnings only) on stderr')
    .addHelpText(
      'after',
      `\nRead models:\n${[...READ_MODELS.values()].map((m) => `  ${m.name.padEnd(9)} ${m.description}`).join('\n')}`,
    )
    .exitOverride()
    .configureOutput({ writeOut: (s) => io.stderr.write(s), writeErr: (s) => io.stderr.write(s) });
}

/** Runs the command line `argv` (without node and script). @returns the exit status. */
export async function runRebuildCli(
  argv: readonly string[],
  io: RebuildCliIo,
  deps: RebuildCliDeps = {},
): Promise<number> {
  const cmd = program(io);
  try {
    cmd.parse([...argv], { from: 'user' });
  } catch (err) {
    if (err instanceof CommanderError) return err.exitCode === 0 ? 0 : 2;
    throw err;
  }
  const [name] = cmd.processedArgs as [string];
  const o = cmd.opts<{
    swap: boolean;
    acceptDifferences?: boolean;
    lockTimeoutMs: number;
    lockAttempts: number;
    swapLag: number;
    verbose?: boolean;
  }>();
  const say = (s: string) => io.stderr.write(`${s}\n`);
  let config: ProjectorConfig;
  try {
    config = loadProjectorConfig(deps.env ?? process.env);
  } catch (err) {
    say(`rebuild: ${(err as Error).message}`);
    return 2;
  }
  const logger =
    deps.logger ?? createLogger('rebuild', o.verbose ? config.process.logLevel : 'warn', pino.destination(2));
  const sql = deps.sql ?? createSql(config, { max: 3 });
  const kafka = deps.kafka ?? createKafka(config, 'rebuild', logger);
  const progress = createProgressPrinter(io.stderr, name);
  const show = (title: string, c: Comparison) => {
    say(`${title}: ${c.identical ? 'identical' : 'DIFFERENT'}`);
    for (const t of c.tables)
      say(`  ${t.table}: ${t.liveRows} live rows, ${t.rebuiltRows} rebuilt rows, ${t.differences} differing`);
    for (const d of c.differences)
      say(
        `  ${d.table} ${d.kind} ${JSON.stringify(d.key)} [${d.columns.join(',')}]: live ${JSON.stringify(d.live)} rebuilt ${JSON.stringify(d.rebuilt)}`,
      );
  };
  try {
    const r = await rebuildReadModel({
      config,
      kafka,
      sql,
      logger,
      model: name,
      swap: o.swap,
      acceptDifferences: o.acceptDifferences === true,
      lockTimeoutMs: o.lockTimeoutMs,
      lockAttempts: o.lockAttempts,
      swapLag: o.swapLag,
      onProgress: (p) => progress.update(p),
    });
    progress.stop();
    say(
      `rebuild ${name}: ${r.records} records replayed (${r.events} projected, ${r.skipped} undecodable skipped), ` +
        `${Math.round(r.recordsPerSecond)} records/s; offsets at the ${r.swapped ? 'swap' : 'check'} ${JSON.stringify(r.checkpoints)}`,
    );
    show('before the swap', r.before);
    if (r.after) show('as of the swap', r.after);
    say(
      r.swapped
        ? `swapped in; the lock was held ${Math.round(r.lockedMs)} ms (${r.lockedRecords} records caught up meanwhile)`
        : 'not swapped (--no-swap)',
    );
    if (r.retiredSchema)
      say(`the replaced tables are kept in schema ${r.retiredSchema} until the next rebuild of ${name}`);
    const code = (r.after ?? r.before).identical || o.acceptDifferences ? 0 : 1;
    io.out(JSON.stringify({ ok: code === 0, ...r }));
    return code;
  } catch (err) {
    progress.stop();
    const code = err instanceof RebuildError ? err.code : undefined;
    say(
      `rebuild ${name} failed: ${code ? `${code}: ${(err as Error).message}` : ((err as Error).stack ?? String(err))}`,
    );
    if (err instanceof RebuildError && err.comparison) show('before the swap', err.comparison);
    io.out(JSON.stringify({ ok: false, code, error: (err as Error).message }));
    return 1;
  } finally {
    if (!deps.sql) await sql.end({ timeout: 5 }).catch(() => {});
  }
}
