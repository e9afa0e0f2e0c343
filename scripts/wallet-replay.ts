/**
 * `npm run wallet:replay [-- --tx-id 41 --tx-id 45]`: re-appends callbacks parked by the wallet
 * saga (wallet-transactions.dead-letter) to wallet-transactions, all of them or those whose
 * provider_tx_id is given, recording each replay in the ledger topic so a record is replayed once
 * (services/dead-letters/wallet-replay.ts; the same as `npm run dead-letters -- replay wallet --all|--tx-id`).
 * Exit 0 with a JSON summary on stdout; 1 on error; 2 on bad arguments.
 */
import { Command, InvalidArgumentError } from 'commander';
import { createKafka } from '../lib/log/kafka.ts';
import { createLogger } from '../lib/logger.ts';
import { loadDeadLettersConfig } from '../services/dead-letters/config.ts';
import { replayParked } from '../services/dead-letters/wallet-replay.ts';

function txId(value: string, previous: number[] = []): number[] {
  if (!/^\d{1,16}$/.test(value) || !Number.isSafeInteger(Number(value)))
    throw new InvalidArgumentError(`not a provider_tx_id: ${JSON.stringify(value)}`);
  return [...previous, Number(value)];
}

const program = new Command()
  .name('wallet-replay')
  .description('Re-drive parked wallet callbacks from the dead-letter topic')
  .option('--tx-id <id>', 'replay only this provider_tx_id (repeatable)', txId)
  .option('--all', 'replay every parked record (the default when no --tx-id is given)')
  .option('--timeout-ms <ms>', 'give up after this long', (v) => {
    const n = Number(v);
    if (!Number.isInteger(n) || n < 1000) throw new InvalidArgumentError('an integer >= 1000');
    return n;
  })
  .exitOverride((err) => process.exit(err.exitCode === 0 ? 0 : 2))
  .parse();

const opts = program.opts<{ txId?: number[]; all?: boolean; timeoutMs?: number }>();
if (opts.all && opts.txId) {
  console.error('wallet-replay: --all and --tx-id exclude each other');
  process.exit(2);
}
const config = loadDeadLettersConfig();
const logger = createLogger('wallet-replay', config.process.logLevel);
try {
  const result = await replayParked({
    config,
    kafka: createKafka(config, 'wallet-replay', logger),
    logger,
    ...(opts.txId ? { txIds: opts.txId } : {}),
    ...(opts.timeoutMs ? { timeoutMs: opts.timeoutMs } : {}),
  });
  process.stdout.write(`${JSON.stringify(result)}\n`);
  process.exit(0);
} catch (err) {
  logger.error({ err }, 'wallet replay failed');
  process.exit(1);
}
