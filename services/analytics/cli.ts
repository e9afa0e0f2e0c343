/**
 * `npm run analytics`: replays a range of the `rounds` topic from the log and reports per-game
 * statistics with every round's provably-fair proof checked (replay.ts).
 *
 *   npm run analytics -- [--from <bound>] [--to <bound>] [--game crash,double] \
 *     [--format table|csv|json] [--charts <dir>] [--progress]
 *
 * A bound is `earliest` (default for --from), `latest` (default for --to: the end when the command
 * starts), an ISO 8601 time with a zone or a date (log timestamps), an offset in every partition,
 * or `partition:offset` pairs. Reads KAFKA_BROKERS and TOPIC_NAMESPACE (services/analytics/config.ts).
 * Exit status: 0 every proof checked passed; 1 some rounds failed their proof (listed in the
 * report); 2 bad arguments; 3 the log could not be read (broker unreachable, topic missing).
 */
import { mkdirSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import cliProgress from 'cli-progress';
import { Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import type { Kafka } from 'kafkajs';
import { AppError } from '../../lib/errors.ts';
import { createKafka } from '../../lib/log/kafka.ts';
import { topicName } from '../../lib/log/topics.ts';
import { createLogger } from '../../lib/logger.ts';
import { GAME_SLUGS, type GameSlug, gameBySlug } from '../../rules/games/catalog.ts';
import { writeCharts } from './charts/index.ts';
import { loadAnalyticsConfig } from './config.ts';
import { AnalyticsInputError, LogUnavailableError } from './errors.ts';
import { toCsv } from './format-csv.ts';
import { toTable } from './format-table.ts';
import { type Bound, checkOrder, parseBound } from './range.ts';
import { replayRounds } from './replay.ts';

export const EXIT = { ok: 0, proofFailed: 1, badInput: 2, logUnavailable: 3 } as const;
export const FORMATS = ['table', 'csv', 'json'] as const;

export interface CliIo {
  /** Receives the report (stdout). */
  readonly out: (text: string) => void;
  /** Receives errors and notes (stderr). */
  readonly err: (line: string) => void;
  /** Builds the client; by default from loadAnalyticsConfig() (the environment). */
  readonly kafka?: () => { kafka: Kafka; topic: string };
  /** Where the progress bar is drawn, when asked for (default stderr). */
  readonly progressStream?: NodeJS.WritableStream;
}

function bound(flag: string) {
  return (v: string): Bound => {
    try {
      return parseBound(v, flag);
    } catch (err) {
      throw new InvalidArgumentError((err as Error).message);
    }
  };
}

function games(v: string, previous: GameSlug[] = []): GameSlug[] {
  const out = [...previous];
  for (const s of v.split(',').map((x) => x.trim())) {
    const g = gameBySlug(s);
    if (!g) throw new InvalidArgumentError(`unknown game "${s}" (games: ${GAME_SLUGS.join(', ')})`);
    if (!out.includes(g.slug)) out.push(g.slug);
  }
  return out;
}

function positiveInt(v: string): number {
  const n = Number(v);
  if (!/^\d{1,10}$/.test(v) || n < 1) throw new InvalidArgumentError('expected a positive integer');
  return n;
}

/**
 * Runs the CLI with `argv` (without node and script).
 * @returns the exit status (EXIT).
 */
export async function runAnalytics(argv: readonly string[], io: CliIo): Promise<number> {
  const program = new Command('analytics')
    .description('Replay the rounds topic from the log and report per-game statistics and fairness.')
    .option('--from <bound>', 'start: earliest, ISO time with zone, offset or p:o,p:o', bound('--from'))
    .option('--to <bound>', 'end (exclusive): latest, ISO time with zone, offset or p:o,p:o', bound('--to'))
    .option(
      '--game <slugs>',
      `games to report, comma-separated or repeated (${GAME_SLUGS.join(', ')})`,
      games,
    )
    .addOption(new Option('--format <format>', 'report format').choices(FORMATS).default('table'))
    .option('--charts <dir>', 'also write SVG charts into this directory')
    .option('--progress', 'draw a progress bar on stderr (default: when stderr is a terminal)')
    .option('--no-progress', 'never draw the progress bar')
    .option('--timeout-ms <ms>', 'give up reading after this long', positiveInt, 3_600_000)
    .exitOverride()
    .configureOutput({ writeOut: (s) => io.out(s), writeErr: (s) => io.err(s.trimEnd()) });
  try {
    program.parse(argv, { from: 'user' });
  } catch (err) {
    if (err instanceof CommanderError) return err.exitCode === 0 ? EXIT.ok : EXIT.badInput;
    throw err;
  }
  const o = program.opts<{
    from?: Bound;
    to?: Bound;
    game?: GameSlug[];
    format: (typeof FORMATS)[number];
    charts?: string;
    progress?: boolean;
    timeoutMs: number;
  }>();
  const from = o.from ?? { kind: 'earliest' };
  const to = o.to ?? { kind: 'latest' };
  const stream = io.progressStream ?? process.stderr;
  const showProgress = o.progress ?? (io.progressStream === undefined && process.stderr.isTTY === true);
  let bar: cliProgress.SingleBar | undefined;
  try {
    checkOrder(from, to);
    if (o.charts) {
      const dir = o.charts;
      // Before the replay, so a long replay does not end on a directory it cannot write.
      try {
        mkdirSync(dir, { recursive: true });
      } catch (err) {
        throw new AnalyticsInputError(`--charts: cannot create ${dir}: ${(err as Error).message}`);
      }
    }
    const { kafka, topic } = (io.kafka ?? defaultKafka)();
    const started = performance.now();
    if (showProgress)
      bar = new cliProgress.SingleBar(
        {
          stream,
          format:
            'replay [{bar}] {percentage}% | {value}/{total} records | {rate} records/s | ETA {eta_formatted}',
          etaBuffer: 50,
          noTTYOutput: true,
          notTTYSchedule: 5000,
        },
        cliProgress.Presets.shades_classic,
      );
    const report = await replayRounds({
      kafka,
      topic,
      from,
      to,
      games: o.game ?? [...GAME_SLUGS],
      timeoutMs: o.timeoutMs,
      onProgress: (done, total) => {
        if (!bar) return;
        const rate = Math.round(done / Math.max(0.001, (performance.now() - started) / 1000));
        if (done === 0) bar.start(total, 0, { rate: 0 });
        else bar.update(done, { rate });
      },
    });
    bar?.stop();
    bar = undefined;
    if (o.format === 'json') io.out(`${JSON.stringify(report, null, 2)}\n`);
    else io.out(o.format === 'csv' ? toCsv(report) : toTable(report));
    if (o.charts) {
      const paths = await writeCharts(o.charts, report);
      io.err(`wrote ${paths.length} charts: ${paths.join(', ')}`);
    }
    if (report.fairness.failed > 0) {
      io.err(`${report.fairness.failed} round(s) failed the provably-fair check (listed in the report)`);
      return EXIT.proofFailed;
    }
    return EXIT.ok;
  } catch (err) {
    bar?.stop();
    if (err instanceof AnalyticsInputError) {
      io.err(`error: ${err.message}`);
      return EXIT.badInput;
    }
    if (err instanceof LogUnavailableError) {
      io.err(`error: ${err.message}`);
      return EXIT.logUnavailable;
    }
    if (err instanceof AppError) {
      io.err(`error: ${err.message}`);
      return EXIT.badInput;
    }
    throw err;
  }
}

function defaultKafka(): { kafka: Kafka; topic: string } {
  const config = loadAnalyticsConfig();
  // kafkajs logs each failed connection attempt; the CLI prints one clear error instead.
  const logger = createLogger('analytics', 'silent');
  return {
    kafka: createKafka(config, 'analytics', logger, { retries: 3 }),
    topic: topicName(config, 'rounds'),
  };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  runAnalytics(process.argv.slice(2), { out: (t) => process.stdout.write(t), err: console.error }).then(
    (code) => {
      process.exitCode = code;
    },
    (err: unknown) => {
      console.error(err);
      process.exitCode = EXIT.logUnavailable;
    },
  );
}
