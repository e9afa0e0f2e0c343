/**
 * `npm run rebuild -- <read-model> [options]`: rebuilds a read model (rounds, api-keys, wallet) from
 * the log and swaps it in with no downtime (services/projector/rebuild/cli.ts has the options and exit
 * statuses; docs/decisions/projector/0005-rebuild-shadow-schema-following-the-live-checkpoints.md the design).
 */
import { runRebuildCli } from '../services/projector/rebuild/cli.ts';

process.exit(
  await runRebuildCli(process.argv.slice(2), {
    out: (s) => process.stdout.write(`${s}\n`),
    stderr: process.stderr,
  }),
);
