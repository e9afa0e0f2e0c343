/**
 * `npm run operator:probe -- <operator_id> [--json]`: runs an operator's readiness probe now
 * (lib/http/operator-probe.ts) — the signed balance callback for the readiness
 * test player and a request with no money fields on every configured callback path — stores the
 * result as the admin API does (request-access grants real-money sessions only to a ready
 * operator), and prints each check. Exit 0 when ready, 1 when not (or unknown), 2 on bad arguments.
 */
import { Command } from 'commander';
import { migrate } from '../lib/db/migrate.ts';
import { readOperatorConfig, storeReadiness } from '../lib/db/operator-config.ts';
import { createSql } from '../lib/db/pool.ts';
import { createCallbackClient } from '../lib/http/callback-client.ts';
import { probeOperator } from '../lib/http/operator-probe.ts';
import { loadApiConfig } from '../services/api/config.ts';

const program = new Command()
  .name('operator-probe')
  .description("Run an operator's readiness probe and store its result")
  .argument('<operator_id>', 'the operator (opr_…)')
  .option('--json', 'print the result as JSON')
  .exitOverride((err) => process.exit(err.exitCode === 0 ? 0 : 2))
  .parse();
const [operatorId] = program.args as [string];
const { json } = program.opts<{ json?: boolean }>();

const config = loadApiConfig();
const sql = createSql(config, { max: 1 });
const client = createCallbackClient(8);
try {
  await migrate(sql, config.db.schema);
  const op = await readOperatorConfig(sql, operatorId);
  if (!op) {
    console.error(`operator-probe: no enabled operator ${operatorId}`);
    process.exitCode = 1;
  } else {
    const r = await probeOperator(op, client, Date.now());
    await storeReadiness(sql, operatorId, r);
    if (json) console.log(JSON.stringify(r, null, 2));
    else {
      for (const c of r.checks)
        console.log(`${c.ok ? 'ok  ' : 'FAIL'} ${c.name.padEnd(9)} ${c.method} ${c.path}  ${c.detail}`);
      console.log(r.ready ? `${operatorId} is ready` : `${operatorId} is NOT ready`);
    }
    process.exitCode = r.ready ? 0 : 1;
  }
} finally {
  client.close();
  await sql.end({ timeout: 5 });
}
