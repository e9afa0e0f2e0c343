/**
 * The auth-keys projector on a real broker and Postgres: keys created, revoked and deleted reach
 * `api_keys` with the checkpoint; a restart resumes from Postgres' checkpoint, and a rebuilt
 * (emptied) read model is replayed from the start.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newKeyId, secretHash } from '../../../lib/auth/credentials.ts';
import { appendKeyEvent, type KeyCreated } from '../../../lib/auth/key-events.ts';
import { ensureTopics } from '../../../lib/log/topics.ts';
import { createLogger } from '../../../lib/logger.ts';
import { createTestEnv, type TestEnv } from '../../../tests/support/projector.ts';
import { type AuthKeysProjector, buildAuthKeysProjector } from './projector.ts';

let env: TestEnv;
beforeAll(async () => {
  env = await createTestEnv('authkeys', { TOPIC_PARTITIONS: '2' });
  const admin = env.kafka.admin();
  await admin.connect();
  await ensureTopics(admin, env.config, ['authKeys']);
  await admin.disconnect();
});
afterAll(async () => {
  await env?.close();
});

function created(name: string): KeyCreated {
  return {
    key_id: newKeyId(),
    name,
    kind: 'public',
    secret_sha256: secretHash(randomBytes(8).toString('hex')),
    scopes: ['read:games', 'stream:*'],
    rate_limit: 100,
    allowed_origins: ['https://example.com'],
    admin: false,
    visitor_id: 'v',
    bound_domain: 'example.com',
    created_at: 1_800_000_000_000,
  };
}

async function until<T>(f: () => Promise<T>, ok: (v: T) => boolean, ms = 15_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await f();
    if (ok(v) || Date.now() > end) return v;
    await new Promise((r) => setTimeout(r, 100));
  }
}

const rows = () =>
  env.sql<{ key_id: string; name: string; scopes: string[]; revoked: boolean; deleted: boolean }[]>`
    select key_id, name, scopes, revoked_at is not null as revoked, deleted from api_keys order by name`;

describe('auth-keys projector', () => {
  it('projects create, revoke (also within one batch) and delete, and resumes or rebuilds from Postgres', async () => {
    const a = created('a');
    const b = created('b');
    await appendKeyEvent(env.producer, env.config, { type: 'KeyCreated', value: a });
    await appendKeyEvent(env.producer, env.config, { type: 'KeyCreated', value: b });
    await appendKeyEvent(env.producer, env.config, {
      type: 'KeyRevoked',
      value: { key_id: b.key_id, at: 1_800_000_001_000 },
    });
    const logger = createLogger('t', 'silent');
    let p: AuthKeysProjector = buildAuthKeysProjector({ ...env, logger });
    await p.start();
    const first = await until(rows, (r) => r.length === 2 && r[1]?.revoked === true);
    expect(first).toEqual([
      { key_id: a.key_id, name: 'a', scopes: ['read:games', 'stream:*'], revoked: false, deleted: false },
      { key_id: b.key_id, name: 'b', scopes: ['read:games', 'stream:*'], revoked: true, deleted: false },
    ]);
    await p.stop();

    await appendKeyEvent(env.producer, env.config, {
      type: 'KeyDeleted',
      value: { key_id: a.key_id, at: 1_800_000_002_000 },
    });
    p = buildAuthKeysProjector({ ...env, logger });
    await p.start();
    expect((await until(rows, (r) => r[0]?.deleted === true))[0]?.deleted).toBe(true);
    await p.stop();
    const [cp] = await env.sql<{ n: string }[]>`
      select sum("offset")::text as n from projection_checkpoints where projection = 'auth-keys'`;
    expect(cp?.n).toBe('5'); // 4 events + the tombstone after KeyDeleted

    // A rebuilt read model (rows and checkpoint gone) is replayed from the start of the topic.
    await env.sql`delete from api_keys`;
    await env.sql`delete from projection_checkpoints where projection = 'auth-keys'`;
    p = buildAuthKeysProjector({ ...env, logger });
    await p.start();
    const rebuilt = await until(
      rows,
      (r) => r.length === 2 && r[0]?.deleted === true && r[1]?.revoked === true,
    );
    expect(rebuilt.map((r) => [r.name, r.revoked, r.deleted])).toEqual([
      ['a', false, true],
      ['b', true, false],
    ]);
    await p.stop();
  });
});
