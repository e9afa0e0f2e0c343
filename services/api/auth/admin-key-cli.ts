/**
 * `npm run admin-key -- create --name <name>` (scripts/admin-key.ts), runnable in-process: mints a
 * private admin key by appending its KeyCreated to `auth-keys`. No API restart and
 * no running API are needed: every node's key table reads the record within a second. Whoever can
 * append to the log (KAFKA_BROKERS, TOPIC_NAMESPACE of the deployment) can mint one, which is the
 * same trust as the log itself; the secret is printed once on stdout and only its SHA-256 is kept.
 *
 * Exit status: 0 created; 1 the broker refused or could not be reached; 2 bad arguments.
 */
import { Command, CommanderError, InvalidArgumentError } from 'commander';
import type { Kafka } from 'kafkajs';
import { createKafka } from '../../../lib/log/kafka.ts';
import { createLogger } from '../../../lib/logger.ts';
import { loadApiConfig } from '../config.ts';
import { appendAdminKey } from './bootstrap.ts';

export interface AdminKeyCliIo {
  readonly out: (text: string) => void;
  readonly err: (text: string) => void;
}

/** Longest key name (the same bound as POST /api/auth/keys). */
const NAME_MAX = 128;

function keyName(v: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is refused
  if (v.length === 0 || v.length > NAME_MAX || /[\u0000-\u001f\u007f]/.test(v))
    throw new InvalidArgumentError(`a name of 1..${NAME_MAX} characters without control characters`);
  return v;
}

/**
 * Runs the command line `argv` (without node and script).
 * @param deps.env settings (default: the environment); deps.kafka a client to use instead.
 * @returns the exit status.
 */
export async function runAdminKeyCli(
  argv: readonly string[],
  io: AdminKeyCliIo,
  deps: { env?: Record<string, string | undefined>; kafka?: Kafka; now?: () => number } = {},
): Promise<number> {
  let status = 0;
  const program = new Command()
    .name('admin-key')
    .description('Mint an admin API key on the auth-keys log (no API restart needed)')
    .exitOverride()
    .configureOutput({ writeOut: (s) => io.out(s.trimEnd()), writeErr: (s) => io.err(s.trimEnd()) });
  program
    .command('create')
    .description('Create a private admin key; its secret is printed once')
    .requiredOption('--name <name>', 'a name for the key list', keyName)
    .action(async (opts: { name: string }) => {
      const config = loadApiConfig(deps.env ?? process.env);
      const kafka = deps.kafka ?? createKafka(config, 'admin-key', createLogger('admin-key', 'warn'));
      const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
      await producer.connect();
      try {
        const k = await appendAdminKey(producer, config, { name: opts.name, now: (deps.now ?? Date.now)() });
        io.out(`Admin key ${k.keyId} "${opts.name}" created (shown once, store it now):`);
        io.out(k.secret);
      } finally {
        await producer.disconnect();
      }
    });
  try {
    await program.parseAsync([...argv], { from: 'user' });
  } catch (err) {
    if (err instanceof CommanderError) return err.exitCode === 0 ? 0 : 2;
    io.err(`admin-key failed: ${err instanceof Error ? err.message : String(err)}`);
    status = 1;
  }
  return status;
}
