/**
 * The first admin key (issue 4 item 3): AUTH_ADMIN_KEY when set (registered once, by its hash), else,
 * when the key table holds no usable admin key, a new private admin key whose secret is written ONCE
 * to stdout (not through the logger, whose lines are shipped and kept). Two API nodes starting
 * together on an empty topic may each create one; both are valid and can be revoked.
 */
import type { Producer } from 'kafkajs';
import { newKeyId, newSecret, secretHash } from '../../../lib/auth/credentials.ts';
import { appendKeyEvent } from '../../../lib/auth/key-events.ts';
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
  const pos = await appendKeyEvent(producer, config, {
    type: 'KeyCreated',
    value: {
      key_id: newKeyId(),
      name: configured ? 'admin (AUTH_ADMIN_KEY)' : 'admin (generated at first start)',
      kind: 'private',
      secret_sha256: secretHash(secret),
      scopes: ['admin'],
      rate_limit: 1000,
      allowed_origins: [],
      admin: true,
      visitor_id: null,
      bound_domain: null,
      created_at: deps.now,
    },
  });
  await table.waitFor(pos);
  if (configured) return 'configured-registered';
  const print = deps.print ?? ((line: string) => process.stdout.write(line));
  print(`\nFirst admin key (shown once, store it now): ${secret}\n\n`);
  return 'generated';
}
