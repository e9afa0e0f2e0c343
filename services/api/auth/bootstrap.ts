/**
 * The first admin key: AUTH_ADMIN_KEY when set (registered once, by its hash), else,
 * when the key table holds no usable admin key, a new private admin key whose secret is written ONCE
 * to stdout (not through the logger, whose lines are shipped and kept). Two API nodes starting
 * together on an empty topic may each create one; both are valid and can be revoked.
 */
import type { Producer } from 'kafkajs';
import { newKeyId, newSecret, secretHash } from '../../../lib/auth/credentials.ts';
import { appendKeyEvent, type KeyCreated, type LogPosition } from '../../../lib/auth/key-events.ts';
import type { KeyTable } from '../../../lib/auth/key-table.ts';
import type { ApiConfig } from '../config.ts';

/**
 * @param print where the generated secret goes (default: process.stdout).
 * @returns what happened: the configured key existed or was registered, a key was generated, or nothing.
 */
export async function ensureAdminKey(deps: {
  config: Pick<ApiConfig, 'kafka' | 'auth'>;
  table: KeyTable;
  producer: Producer;
  now: number;
  print?: (line: string) => void;
}): Promise<'configured-existing' | 'configured-registered' | 'generated' | 'present'> {
  const { config, table, producer } = deps;
  const configured = config.auth.adminKey;
  if (!configured && table.hasAdmin()) return 'present';
  if (configured && table.findBySecretHash(secretHash(configured))) return 'configured-existing';
  const secret = configured || newSecret('private');
  const name = configured ? 'admin (AUTH_ADMIN_KEY)' : 'admin (generated at first start)';
  const { position } = await appendAdminKey(producer, config, { name, secret, now: deps.now });
  await table.waitFor(position);
  if (configured) return 'configured-registered';
  const print = deps.print ?? ((line: string) => process.stdout.write(line));
  print(`\nFirst admin key (shown once, store it now): ${secret}\n\n`);
  return 'generated';
}

/** The KeyCreated of a private admin key (1000 requests a minute, the private default). */
function adminKeyCreated(name: string, secret: string, now: number): KeyCreated {
  return {
    key_id: newKeyId(),
    name,
    kind: 'private',
    secret_sha256: secretHash(secret),
    scopes: ['admin'],
    rate_limit: 1000,
    allowed_origins: [],
    admin: true,
    visitor_id: null,
    bound_domain: null,
    created_at: now,
  };
}

/**
 * Appends a new private admin key to `auth-keys` (the start-up bootstrap above, and
 * `npm run admin-key -- create`, which needs no running API: every node's key table reads it
 * from the log within a second).
 * @param opts.secret the `sk_live_…` secret (default: a new random one); only its SHA-256 is written.
 * @returns the key id, the secret (to show once) and where the record landed.
 * @throws kafkajs errors when the broker refuses or cannot be reached.
 */
export async function appendAdminKey(
  producer: Producer,
  config: Pick<ApiConfig, 'kafka'>,
  opts: { name: string; secret?: string; now: number },
): Promise<{ keyId: string; secret: string; position: LogPosition }> {
  const secret = opts.secret ?? newSecret('private');
  const value = adminKeyCreated(opts.name, secret, opts.now);
  const position = await appendKeyEvent(producer, config, { type: 'KeyCreated', value });
  return { keyId: value.key_id, secret, position };
}
