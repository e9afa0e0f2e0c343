/**
 * `npm run dead-letters -- list|show|replay …`: the dead-letter topics of the rounds and wallet
 * consumers; `npm run dead-letters -- callbacks list|show|redrive …`: the wallet saga's parked and
 * retrying callbacks in Postgres (services/dead-letters/cli.ts has the commands, options and exit
 * statuses).
 */
import { runDeadLettersCli } from '../services/dead-letters/cli.ts';

process.exit(
  await runDeadLettersCli(process.argv.slice(2), {
    out: (s) => process.stdout.write(`${s}\n`),
    err: (s) => process.stderr.write(`${s}\n`),
  }),
);
