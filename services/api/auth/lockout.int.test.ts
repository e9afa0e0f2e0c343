/**
 * No admin lock-out (finding 2): the last active admin key cannot be revoked or
 * deleted, not even by itself, and `npm run admin-key -- create` mints another one on the log with
 * no restart. Real broker and Postgres.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AuthTestApi, startAuthTestApi } from '../../../tests/support/auth.ts';
import { waitFor } from '../../../tests/support/poll.ts';
import { runAdminKeyCli } from './admin-key-cli.ts';
import { LAST_ADMIN_TEXT } from './routes.ts';

let t: AuthTestApi;
beforeAll(async () => {
  t = await startAuthTestApi();
});
afterAll(async () => {
  await t?.close();
});

const as = (key: string) => ({ 'x-api-key': key });
const adminIdOf = async (key: string): Promise<string> => {
  const res = await t.app.inject({ url: '/api/auth/keys', headers: as(key) });
  const admins = (res.json().keys as { id: string; admin: boolean; revoked_at: string | null }[]).filter(
    (k) => k.admin && k.revoked_at === null,
  );
  if (admins.length === 0) throw new Error('no active admin key listed');
  return (admins[0] as { id: string }).id;
};

/** Mints an admin key through the CLI on this test's topics; returns its secret once the API knows it. */
async function mintWithCli(name: string): Promise<string> {
  const out: string[] = [];
  const env = { ...process.env, TOPIC_NAMESPACE: t.config.kafka.topicNamespace, LOG_LEVEL: 'silent' };
  const status = await runAdminKeyCli(
    ['create', '--name', name],
    { out: (s) => out.push(s), err: () => {} },
    {
      env,
      kafka: t.kafka,
    },
  );
  expect(status).toBe(0);
  const secret = out.find((l) => /^sk_live_[0-9a-f]{64}$/.test(l));
  if (!secret) throw new Error(`no secret printed: ${out.join('\n')}`);
  await waitFor(
    'the API to accept the minted admin key',
    async () =>
      (await t.app.inject({ url: '/api/auth/keys', headers: as(secret) })).statusCode === 200
        ? true
        : undefined,
    10_000,
  );
  return secret;
}

describe('the last active admin key', () => {
  it('is not revoked or deleted, even by itself: 409 with the reason, and it still works', async () => {
    const id = await adminIdOf(t.adminKey);
    const revoke = await t.app.inject({
      method: 'POST',
      url: `/api/auth/keys/${id}/revoke`,
      headers: as(t.adminKey),
    });
    expect(revoke.statusCode).toBe(409);
    expect(revoke.json()).toEqual({ error: LAST_ADMIN_TEXT, success: false });
    const del = await t.app.inject({
      method: 'DELETE',
      url: `/api/auth/keys/${id}`,
      headers: as(t.adminKey),
    });
    expect(del.statusCode).toBe(409);
    expect((await t.app.inject({ url: '/api/auth/keys', headers: as(t.adminKey) })).statusCode).toBe(200);
  });

  it('npm run admin-key -- create mints a working admin key; then the old one can go, and the new one is the last', async () => {
    const oldId = await adminIdOf(t.adminKey);
    const fresh = await mintWithCli('ops on call');
    const listed = (await t.app.inject({ url: '/api/auth/keys', headers: as(fresh) })).json().keys as {
      id: string;
      name: string;
      admin: boolean;
    }[];
    expect(listed.filter((k) => k.admin).map((k) => k.name)).toContain('ops on call');
    const revokeOld = await t.app.inject({
      method: 'POST',
      url: `/api/auth/keys/${oldId}/revoke`,
      headers: as(fresh),
    });
    expect(revokeOld.statusCode).toBe(200);
    const freshId = await adminIdOf(fresh);
    const self = await t.app.inject({
      method: 'POST',
      url: `/api/auth/keys/${freshId}/revoke`,
      headers: as(fresh),
    });
    expect(self.statusCode).toBe(409);
  });

  it('two concurrent revokes of the last two admin keys: one passes, the other is 409', async () => {
    const a = await mintWithCli('a');
    const b = await mintWithCli('b');
    const keys = (await t.app.inject({ url: '/api/auth/keys', headers: as(a) })).json().keys as {
      id: string;
      name: string;
      admin: boolean;
      revoked_at: string | null;
    }[];
    // Leave exactly a and b active.
    for (const k of keys.filter((k) => k.admin && k.revoked_at === null && !['a', 'b'].includes(k.name))) {
      const r = await t.app.inject({ method: 'POST', url: `/api/auth/keys/${k.id}/revoke`, headers: as(a) });
      expect(r.statusCode).toBe(200);
    }
    const ids = keys.filter((k) => k.name === 'a' || k.name === 'b').map((k) => k.id);
    const answers = await Promise.all(
      ids.map((id, i) =>
        t.app.inject({ method: 'POST', url: `/api/auth/keys/${id}/revoke`, headers: as(i === 0 ? b : a) }),
      ),
    );
    expect(answers.map((r) => r.statusCode).sort()).toEqual([200, 409]);
  });

  it('the CLI refuses bad arguments with status 2', async () => {
    const io = { out: () => {}, err: () => {} };
    expect(await runAdminKeyCli(['create'], io)).toBe(2);
    expect(await runAdminKeyCli(['create', '--name', ''], io)).toBe(2);
    expect(await runAdminKeyCli(['mint'], io)).toBe(2);
  });
});
