/**
 * The auth endpoints and REST enforcement on a real broker and Postgres: keys, tokens, browser keys,
 * revocation and deletion, per-key rate limits, scopes, and secrets kept out of the logs.
 */
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../lib/logger.ts';
import { startLastUsedWriter } from '../../services/api/auth/last-used.ts';
import { buildAuthKeysProjector } from '../../services/projector/auth-keys/projector.ts';
import { type AuthTestApi, startAuthTestApi } from '../support/auth.ts';

let t: AuthTestApi;
const logLines: string[] = [];
const capture = new Writable({
  write(chunk, _enc, cb) {
    logLines.push(String(chunk));
    cb();
  },
});

beforeAll(async () => {
  t = await startAuthTestApi({ LOG_LEVEL: 'debug' }, { logger: createLogger('api-test', 'debug', capture) });
});
afterAll(async () => {
  await t?.close();
});

let ipSeq = 0;
const ip = () => `10.9.0.${++ipSeq}`;
const admin = () => ({ 'x-api-key': t.adminKey });

async function createKey(body: Record<string, unknown>): Promise<{ id: string; secret: string }> {
  const res = await t.app.inject({ method: 'POST', url: '/api/auth/keys', headers: admin(), payload: body });
  expect(res.statusCode).toBe(201);
  const json = res.json();
  return { id: json.key.id, secret: json.secret };
}

describe('auth endpoints', () => {
  it('lists the scopes publicly', async () => {
    const res = await t.app.inject({ url: '/api/auth/scopes', remoteAddress: ip() });
    expect(res.statusCode).toBe(200);
    expect(res.json().scopes.map((s: { name: string }) => s.name)).toEqual([
      'read:rounds',
      'read:games',
      'stream:*',
      'stream:game',
      'admin',
      'publish:rounds',
      'publish:rounds:crash',
      'publish:rounds:double',
      'publish:rounds:slot',
      'publish:rounds:wall-street',
    ]);
  });

  it('creates a private key (secret once), lists it without the secret, and it works with a token too', async () => {
    const { id, secret } = await createKey({ name: 'server', scopes: ['read:games'] });
    expect(secret).toMatch(/^sk_live_[0-9a-f]{64}$/);
    const list = await t.app.inject({ url: '/api/auth/keys', headers: admin() });
    expect(list.statusCode).toBe(200);
    expect(list.body).not.toContain(secret);
    const listed = list.json().keys.find((k: { id: string }) => k.id === id);
    expect(listed).toMatchObject({
      name: 'server',
      kind: 'private',
      rate_limit: 1000,
      admin: false,
      revoked_at: null,
    });

    const games = await t.app.inject({ url: '/api/games', headers: { authorization: `Bearer ${secret}` } });
    expect(games.statusCode).toBe(200);
    const tok = await t.app.inject({
      method: 'POST',
      url: '/api/auth/token',
      headers: { 'x-api-key': secret },
    });
    expect(tok.statusCode).toBe(200);
    expect(tok.json()).toMatchObject({ success: true, expires_in: 15 });
    const token = tok.json().token as string;
    expect((await t.app.inject({ url: '/api/games', headers: { 'x-api-key': token } })).statusCode).toBe(200);
    // A token cannot mint tokens (it would outlive its 15 s).
    expect(
      (await t.app.inject({ method: 'POST', url: '/api/auth/token', headers: { 'x-api-key': token } }))
        .statusCode,
    ).toBe(401);
    const after = await t.app.inject({ url: '/api/auth/keys', headers: admin() });
    expect(after.json().keys.find((k: { id: string }) => k.id === id).last_used).not.toBeNull();
  });

  it('gives the same browser key for the same pair, bound to its domain', async () => {
    const body = { visitor_id: `v-${ip()}`, bound_domain: 'Shop.Example.com' };
    const first = await t.app.inject({
      method: 'POST',
      url: '/api/auth/browser-key',
      payload: body,
      remoteAddress: ip(),
    });
    expect(first.statusCode).toBe(200);
    expect(first.json()).toMatchObject({ success: true, expires_at: 0, new: true });
    const before = await t.keyTopicEnd();
    const again = await t.app.inject({
      method: 'POST',
      url: '/api/auth/browser-key',
      payload: body,
      remoteAddress: ip(),
    });
    expect(again.json()).toMatchObject({ key: first.json().key, new: false });
    expect(await t.keyTopicEnd()).toBe(before);
    const key = first.json().key as string;
    const ok = await t.app.inject({
      url: '/api/games',
      headers: { 'x-api-key': key, origin: 'https://shop.example.com' },
    });
    expect(ok.statusCode).toBe(200);
    const tok = await t.app.inject({
      method: 'POST',
      url: '/api/auth/token',
      headers: { 'x-api-key': key, origin: 'http://shop.example.com' },
    });
    expect(tok.statusCode).toBe(200);
    const viaToken = await t.app.inject({ url: '/api/games', headers: { 'x-api-key': tok.json().token } });
    expect(viaToken.json()).toMatchObject({ error: 'Unauthorized', reason: 'origin' });
  });

  it('answers a revoked browser key 403 and an unknown route 404, in the REST error form', async () => {
    const ids = async (): Promise<string[]> =>
      (await t.app.inject({ url: '/api/auth/keys', headers: admin() }))
        .json()
        .keys.map((k: { id: string }) => k.id);
    const before = new Set(await ids());
    const body = { visitor_id: `v-${ip()}`, bound_domain: 'revoked.example.com' };
    const mint = () =>
      t.app.inject({ method: 'POST', url: '/api/auth/browser-key', payload: body, remoteAddress: ip() });
    expect((await mint()).statusCode).toBe(200);
    const id = (await ids()).find((k) => !before.has(k));
    expect(id).toBeDefined();
    const rev = await t.app.inject({ method: 'POST', url: `/api/auth/keys/${id}/revoke`, headers: admin() });
    expect(rev.statusCode).toBe(200);
    const again = await mint();
    expect(again.statusCode).toBe(403);
    expect(again.json()).toEqual({ error: 'Forbidden', success: false, reason: 'revoked' });
    const none = await t.app.inject({ url: '/api/no-such-route' });
    expect(none.statusCode).toBe(404);
    expect(none.json()).toEqual({ error: 'Not Found', success: false });
  });

  it('revokes (key and tokens refused, still listed) and deletes (unknown, not listed)', async () => {
    const { id, secret } = await createKey({ name: 'temp', scopes: ['read:games'] });
    const token = (
      await t.app.inject({ method: 'POST', url: '/api/auth/token', headers: { 'x-api-key': secret } })
    ).json().token;
    const rev = await t.app.inject({ method: 'POST', url: `/api/auth/keys/${id}/revoke`, headers: admin() });
    expect(rev.statusCode).toBe(200);
    expect(rev.json().key.revoked_at).not.toBeNull();
    for (const c of [secret, token]) {
      const res = await t.app.inject({ url: '/api/games', headers: { 'x-api-key': c } });
      expect(res.statusCode).toBe(401);
      expect(res.json()).toEqual({ error: 'Unauthorized', success: false, reason: 'revoked' });
    }
    const del = await t.app.inject({ method: 'DELETE', url: `/api/auth/keys/${id}`, headers: admin() });
    expect(del.json()).toEqual({ success: true, id, deleted: true });
    expect((await t.app.inject({ url: '/api/games', headers: { 'x-api-key': secret } })).json().reason).toBe(
      'unknown',
    );
    const list = await t.app.inject({ url: '/api/auth/keys', headers: admin() });
    expect(list.json().keys.map((k: { id: string }) => k.id)).not.toContain(id);
    expect(
      (await t.app.inject({ method: 'DELETE', url: `/api/auth/keys/${id}`, headers: admin() })).statusCode,
    ).toBe(404);
  });

  it('creates a public key with origins and refuses one without', async () => {
    const bad = await t.app.inject({
      method: 'POST',
      url: '/api/auth/keys',
      headers: admin(),
      payload: { name: 'p', scopes: ['read:games'], kind: 'public' },
    });
    expect(bad.statusCode).toBe(400);
    const { secret } = await createKey({
      name: 'p',
      scopes: ['read:games'],
      kind: 'public',
      allowed_origins: ['HTTPS://App.Example.com/'],
    });
    expect(secret).toMatch(/^pk_live_/);
    const res = await t.app.inject({
      url: '/api/games',
      headers: { 'x-api-key': secret, origin: 'https://app.example.com' },
    });
    expect(res.statusCode).toBe(200);
    expect(res.headers['x-ratelimit-limit']).toBe('100');
  });

  it('limits per key with the key’s rate_limit, separately from the IP budget', async () => {
    const { secret } = await createKey({ name: 'slow', scopes: ['read:games'], rate_limit: 2 });
    const addr = ip();
    const codes: number[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await t.app.inject({
        url: '/api/games',
        headers: { 'x-api-key': secret },
        remoteAddress: addr,
      });
      codes.push(res.statusCode);
      if (i === 2)
        expect(res.json()).toEqual({ error: 'Too many requests, please slow down', success: false });
    }
    expect(codes).toEqual([200, 200, 429]);
    expect((await t.app.inject({ url: '/api/games', remoteAddress: addr })).statusCode).toBe(200);
  });

  it('serves anonymous reads while AUTH_REQUIRE_API is off and documents the auth routes', async () => {
    expect((await t.app.inject({ url: '/api/games', remoteAddress: ip() })).statusCode).toBe(200);
    const doc = (await t.app.inject({ url: '/openapi.json' })).json();
    expect(Object.keys(doc.paths)).toEqual(
      expect.arrayContaining([
        '/api/auth/keys',
        '/api/auth/keys/{id}/revoke',
        '/api/auth/token',
        '/api/auth/browser-key',
      ]),
    );
    expect(
      doc.paths['/api/auth/keys'].post.requestBody.content['application/json'].schema.properties,
    ).toHaveProperty('allowed_origins');
  });

  it('writes last use in batches to the api_keys read model the projector keeps', async () => {
    const { id, secret } = await createKey({ name: 'batched', scopes: ['read:games'] });
    const projector = buildAuthKeysProjector({
      config: t.config,
      kafka: t.kafka,
      sql: t.sql,
      logger: createLogger('p', 'silent'),
    });
    await projector.start();
    try {
      const end = Date.now() + 15_000;
      while ((await t.sql`select 1 from api_keys where key_id = ${id}`).length === 0 && Date.now() < end) {
        await new Promise((r) => setTimeout(r, 100));
      }
      const writer = startLastUsedWriter({
        sql: t.sql,
        lastUsed: t.lastUsed,
        periodMs: 60_000,
        logger: createLogger('w', 'silent'),
      });
      await writer.flush(); // earlier tests' uses
      for (let i = 0; i < 3; i++) await t.app.inject({ url: '/api/games', headers: { 'x-api-key': secret } });
      expect(await writer.flush()).toBe(1);
      await writer.stop();
      const [row] = await t.sql<{ n: number }[]>`
        select count(*)::int as n from api_keys where key_id = ${id} and last_used_at > now() - interval '1 minute'`;
      expect(row?.n).toBe(1);
    } finally {
      await projector.stop();
    }
  });

  it('keeps credentials out of the logs', async () => {
    const { secret } = await createKey({ name: 'logged', scopes: ['read:games'] });
    await t.app.inject({
      url: `/api/games?api_key=${secret}&token=tok_abc`,
      headers: { 'x-api-key': secret },
    });
    t.app.log.info({ req: { headers: { authorization: `Bearer ${secret}`, 'x-api-key': secret } } }, 'probe');
    const text = logLines.join('');
    expect(text).toContain('/api/games?api_key=[redacted]&token=[redacted]');
    expect(text).toContain('probe');
    expect(text).not.toContain(secret);
    expect(text).not.toContain(t.adminKey);
  });
});
