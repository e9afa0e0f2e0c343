/**
 * `npm run verify`: recomputes a round from its revealed hash and checks the hash chain.
 *
 *   npm run verify -- --game crash --hash <hex> --index <i> --commitment <hex> [--previous <hex>]
 *   npm run verify -- --game crash --round <round_id>
 *
 * The second form reads the round (and the one before it, for the chain link) from the rounds
 * topic of KAFKA_BROKERS / TOPIC_NAMESPACE. Prints the result and each check, then OK or FAIL.
 * A round that is open (RoundOpened in the log, not finished) is reported as OPEN with its chain
 * position, not as a failure: its hash is revealed when it finishes.
 * Exit status: 0 OK or OPEN, 1 FAIL, 2 bad input or round not found.
 */
import { pathToFileURL } from 'node:url';
import { Command, CommanderError, InvalidArgumentError } from 'commander';
import type { Kafka } from 'kafkajs';
import { AppError } from '../../lib/errors.ts';
import { createKafka } from '../../lib/log/kafka.ts';
import { topicName } from '../../lib/log/topics.ts';
import { createLogger } from '../../lib/logger.ts';
import { FairnessInputError } from '../../rules/errors.ts';
import { type Verification, verifyReveal, verifyRound } from '../../rules/fairness/verify.ts';
import { gameBySlug } from '../../rules/games/catalog.ts';
import { extrasOf, type RoundFinished } from '../../rules/rounds/round.ts';
import { loadEngineConfig } from './config.ts';
import { RoundOpenError } from './errors.ts';
import { findRound } from './log-tail.ts';

export interface CliIo {
  readonly out: (line: string) => void;
  readonly err: (line: string) => void;
  /** Builds the client for `--round`; by default from loadEngineConfig() (the environment). */
  readonly kafka?: () => { kafka: Kafka; topic: string };
}

function positiveInt(v: string): number {
  const n = Number(v);
  if (!/^\d+$/.test(v) || !Number.isSafeInteger(n) || n < 1)
    throw new InvalidArgumentError('expected a positive integer');
  return n;
}

const mark = (b: boolean | null) => (b === null ? 'not checked' : b ? 'OK' : 'FAIL');

function report(io: CliIo, v: Verification, round?: RoundFinished): number {
  if (round) {
    const p = round.proof;
    io.out(`round:      ${round.round_id} (epoch ${p?.chain_epoch}, index ${p?.chain_index})`);
    io.out(`finished:   ${new Date(round.finished_at).toISOString()}`);
    io.out(`recorded:   ${JSON.stringify(extrasOf(round.result))}`);
  }
  io.out(`result:     ${JSON.stringify(extrasOf(v.result))}`);
  io.out(`chain:      ${mark(v.chainOk)} (sha256^index(hash) = commitment)`);
  io.out(`link:       ${mark(v.linkOk)} (sha256(hash) = previous round's hash)`);
  if (round) io.out(`result:     ${mark(v.resultOk)} (recorded = recomputed)`);
  io.out(v.ok ? 'OK' : 'FAIL');
  return v.ok ? 0 : 1;
}

/**
 * Runs the CLI with `argv` (without node and script). @returns the exit status.
 */
export async function runVerify(argv: readonly string[], io: CliIo): Promise<number> {
  const program = new Command('verify')
    .description('Recompute a round from its revealed hash and check the hash chain.')
    .requiredOption('--game <slug>', 'crash, double, slot or wall-street')
    .option('--hash <hex>', 'revealed chain hash of the round (64 hex)')
    .option('--index <n>', 'chain index of the round (>= 1)', positiveInt)
    .option('--commitment <hex>', 'published commitment of the chain (64 hex)')
    .option('--previous <hex>', "the previous round's hash, to check the link")
    .option('--round <round_id>', 'read the round from the rounds topic instead', positiveInt)
    .exitOverride()
    .configureOutput({ writeOut: (s) => io.out(s.trimEnd()), writeErr: (s) => io.err(s.trimEnd()) });
  try {
    program.parse(argv, { from: 'user' });
  } catch (err) {
    if (err instanceof CommanderError) return err.exitCode === 0 ? 0 : 2;
    throw err;
  }
  const o = program.opts<{
    game: string;
    hash?: string;
    index?: number;
    commitment?: string;
    previous?: string;
    round?: number;
  }>();
  try {
    const game = gameBySlug(o.game);
    if (!game) throw new FairnessInputError(`unknown game "${o.game}"`);
    if (o.round !== undefined) {
      if (o.hash || o.index || o.commitment || o.previous)
        throw new FairnessInputError(
          '--round cannot be combined with --hash/--index/--commitment/--previous',
        );
      const { kafka, topic } = (io.kafka ?? defaultKafka)();
      const { round, previous } = await findRound(kafka, topic, game.slug, o.round);
      // One chain = one commitment: an external game's rounds each commit on their own (chain index 1).
      const sameChain =
        previous?.proof?.chain_epoch === round.proof?.chain_epoch &&
        previous?.proof?.commitment === round.proof?.commitment;
      return report(io, verifyRound(round, previous && sameChain ? previous : undefined), round);
    }
    if (!o.hash || o.index === undefined || !o.commitment)
      throw new FairnessInputError('give --round, or all of --hash, --index and --commitment');
    const input = { game: game.slug, hash: o.hash, index: o.index, commitment: o.commitment };
    return report(io, verifyReveal(o.previous ? { ...input, previousHash: o.previous } : input));
  } catch (err) {
    if (err instanceof RoundOpenError) {
      const o = err.opened;
      io.out(`round:      ${o.round_id} (epoch ${o.chain_epoch}, index ${o.chain_index})`);
      io.out(`commitment: ${o.commitment}`);
      io.out(
        `betting:    ${new Date(o.betting_opens_at).toISOString()} to ${new Date(o.betting_closes_at).toISOString()}`,
      );
      io.out('OPEN (not finished yet: its hash is revealed with its result)');
      return 0;
    }
    if (!(err instanceof AppError)) throw err;
    io.err(`error: ${err.message}`);
    return 2;
  }
}

function defaultKafka(): { kafka: Kafka; topic: string } {
  const config = loadEngineConfig();
  return {
    kafka: createKafka(config, 'verify-cli', createLogger('verify-cli', 'error')),
    topic: topicName(config, 'rounds'),
  };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  runVerify(process.argv.slice(2), { out: console.log, err: console.error }).then(
    (code) => process.exit(code),
    (err: unknown) => {
      console.error(err);
      process.exit(2);
    },
  );
}
