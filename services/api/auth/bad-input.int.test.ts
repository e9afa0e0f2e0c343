/**
 * The bad-input suite of the REST side, table-driven on a real broker and Postgres with
 * AUTH_REQUIRE_API on: each case gets its status and error body, and nothing is appended to
 * `auth-keys` (its high-water mark does not move).
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueToken } from '../../../lib/auth/tokens.ts';
import { type AuthTestApi, startAuthTestApi } from '../../../tests/support/auth.ts';
import { bodyCases, type Case } from './bad-input.cases.ts';

let t: AuthTestApi;
/** Credentials made in beforeAll. */
const c = { reader: '', readerId: '', revoked: '', revokedToken: '', pub: '', streamGame: '', token: '' };

beforeAll(async () => {
  t = await startAuthTestApi({ AUTH_REQUIRE_API: 'true' });
  const mk = async (body: Record<string, unknown>) => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/auth/keys',
      headers: { 'x-api-key': t.adminKey },
      payload: body,
    });
    if (res.statusCode !== 201) throw new Error(`create key: ${res.statusCode} ${res.body}`);
    return res.json() as { key: { id: string }; secret: string };
  };
  const tokenOf = async (key: string) =>
    (await t.app.inject({ method: 'POST', url: '/api/auth/token', headers: { 'x-api-key': key } })).json()
      .token as string;
  const reader = await mk({ name: 'reader', scopes: ['read:games', 'read:rounds'] });
  c.reader = reader.secret;
  c.readerId = reader.key.id;
  c.token = await tokenOf(c.reader);
  const revoked = await mk({ name: 'revoked', scopes: ['read:games'] });
  c.revoked = revoked.secret;
  c.revokedToken = await tokenOf(c.revoked);
  await t.app.inject({
    method: 'POST',
    url: `/api/auth/keys/${revoked.key.id}/revoke`,
    headers: { 'x-api-key': t.adminKey },
  });
  c.pub = (
    await mk({
      name: 'pub',
      scopes: ['read:games'],
      kind: 'public',
      allowed_origins: ['https://example.com'],
    })
  ).secret;
  c.streamGame = (await mk({ name: 'streamer', scopes: ['stream:game'] })).secret;
});
afterAll(async () => {
  await t?.close();
});

const hex = (n: number) =>
  randomBytes(Math.ceil(n / 2))
    .toString('hex')
    .slice(0, n);
const flip = (s: string, i: number) => s.slice(0, i) + (s[i] === '0' ? '1' : '0') + s.slice(i + 1);

const cases: Case[] = [
  ...bodyCases(() => t.adminKey),
  { name: 'missing credential', headers: () => ({}), status: 401, reason: 'missing' },
  {
    name: 'wrong prefix',
    headers: () => ({ 'x-api-key': `xk_live_${hex(64)}` }),
    status: 401,
    reason: 'malformed',
  },
  {
    name: 'Authorization not Bearer',
    headers: () => ({ authorization: `Basic ${hex(20)}` }),
    status: 401,
    reason: 'malformed',
  },
  {
    name: 'sk_live_ too short',
    headers: () => ({ 'x-api-key': `sk_live_${hex(63)}` }),
    status: 401,
    reason: 'malformed',
  },
  {
    name: 'sk_live_ too long',
    headers: () => ({ 'x-api-key': `sk_live_${hex(66)}` }),
    status: 401,
    reason: 'malformed',
  },
  {
    name: 'sk_live_ non-hex',
    headers: () => ({ 'x-api-key': `sk_live_${'z'.repeat(64)}` }),
    status: 401,
    reason: 'malformed',
  },
  {
    name: 'pk_live_ too short',
    headers: () => ({ 'x-api-key': `pk_live_${hex(16)}` }),
    status: 401,
    reason: 'malformed',
  },
  {
    name: 'valid-looking unknown key',
    headers: () => ({ 'x-api-key': `sk_live_${hex(64)}` }),
    status: 401,
    reason: 'unknown',
  },
  {
    name: 'token with one hex digit flipped',
    headers: () => ({ 'x-api-key': flip(c.token, 40) }),
    status: 401,
    reason: 'malformed',
  },
  {
    name: 'token 1 s past expiry',
    headers: () => ({ 'x-api-key': issueToken(t.table.tokenSecret, c.readerId, Date.now() - 16_000).token }),
    status: 401,
    reason: 'expired',
  },
  { name: 'revoked key', headers: () => ({ 'x-api-key': c.revoked }), status: 401, reason: 'revoked' },
  {
    name: 'token of a revoked key',
    headers: () => ({ 'x-api-key': c.revokedToken }),
    status: 401,
    reason: 'revoked',
  },
  {
    name: 'public key without Origin',
    headers: () => ({ 'x-api-key': c.pub }),
    status: 401,
    reason: 'origin',
  },
  {
    name: 'public key with a wrong Origin',
    headers: () => ({ 'x-api-key': c.pub, origin: 'https://evil.example' }),
    status: 401,
    reason: 'origin',
  },
  {
    name: 'public key with the http variant of its Origin',
    headers: () => ({ 'x-api-key': c.pub, origin: 'http://example.com' }),
    status: 401,
    reason: 'origin',
  },
  {
    name: 'public key with an upper-case, trailing-slash Origin (accepted)',
    headers: () => ({ 'x-api-key': c.pub, origin: 'HTTPS://EXAMPLE.COM/' }),
    status: 200,
  },
  {
    name: 'stream:game key on /api/games',
    headers: () => ({ 'x-api-key': c.streamGame }),
    status: 403,
    reason: 'scope',
  },
  {
    name: 'non-admin lists keys',
    url: '/api/auth/keys',
    headers: () => ({ 'x-api-key': c.reader }),
    status: 403,
    reason: 'scope',
  },
  {
    name: 'non-admin creates a key',
    method: 'POST',
    url: '/api/auth/keys',
    headers: () => ({ 'x-api-key': c.reader }),
    payload: { name: 'escalate', scopes: ['admin'] },
    status: 403,
    reason: 'scope',
  },
  {
    name: 'token of a non-admin revokes a key',
    method: 'POST',
    url: '/api/auth/keys/key_0000000000000000/revoke',
    headers: () => ({ 'x-api-key': c.token }),
    status: 403,
    reason: 'scope',
  },
  {
    name: 'oversized X-API-Key',
    headers: () => ({ 'x-api-key': `sk_live_${'a'.repeat(12_000)}` }),
    status: 401,
    reason: 'malformed',
  },
  {
    name: 'token endpoint without a key',
    method: 'POST',
    url: '/api/auth/token',
    headers: () => ({}),
    status: 401,
    reason: 'missing',
  },
];

describe('bad input on REST (AUTH_REQUIRE_API on)', () => {
  it.each(cases)('$name → $status', async (k) => {
    const before = await t.keyTopicEnd();
    const res = await t.app.inject({
      method: k.method ?? 'GET',
      url: k.url ?? '/api/games',
      headers: k.headers?.() ?? {},
      ...(k.payload === undefined ? {} : { payload: k.payload as Record<string, unknown> }),
    });
    expect(res.statusCode).toBe(k.status);
    if (k.status === 401)
      expect(res.json()).toEqual({ error: 'Unauthorized', success: false, reason: k.reason });
    else if (k.status === 403)
      expect(res.json()).toEqual({ error: 'Forbidden', success: false, reason: 'scope' });
    else if (k.status === 400)
      expect(res.json()).toMatchObject({ success: false, error: expect.any(String) });
    expect(await t.keyTopicEnd()).toBe(before);
  });

  it('a fresh token works after the expired one', async () => {
    const tok = await t.app.inject({
      method: 'POST',
      url: '/api/auth/token',
      headers: { authorization: `Bearer ${c.reader}` },
    });
    const res = await t.app.inject({
      url: '/api/games',
      headers: { authorization: `Bearer ${tok.json().token}` },
    });
    expect(res.statusCode).toBe(200);
  });

  it('refuses a request head over 16 KiB on a real socket with 431', async () => {
    const address = await t.app.listen({ host: '127.0.0.1', port: 0 });
    const res = await fetch(`${address}/api/games`, { headers: { 'x-api-key': 'a'.repeat(20_000) } });
    expect(res.status).toBe(431);
  });
});
