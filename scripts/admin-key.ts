/**
 * `npm run admin-key -- create --name <name>`: mints an admin API key on the `auth-keys` log
 * (services/api/auth/admin-key-cli.ts has the command, its settings and exit statuses).
 */
import { runAdminKeyCli } from '../services/api/auth/admin-key-cli.ts';

process.exit(
  await runAdminKeyCli(process.argv.slice(2), {
    out: (s) => process.stdout.write(`${s}\n`),
    err: (s) => process.stderr.write(`${s}\n`),
  }),
);
