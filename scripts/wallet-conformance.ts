/**
 * `npm run wallet:conformance -- --operator <id> | --url <base> --secret <whsec_…> --form A|B …`:
 * the wallet conformance kit (services/wallet-conformance/cli.ts has the options and exit statuses;
 * docs/operators.md "Conformance kit" what each row checks).
 */
import { runConformanceCli } from '../services/wallet-conformance/cli.ts';

process.exit(
  await runConformanceCli(process.argv.slice(2), {
    out: (s) => process.stdout.write(`${s}\n`),
    err: (s) => process.stderr.write(`${s}\n`),
  }),
);
