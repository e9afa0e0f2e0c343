import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { testKey } from '../../tests/support/credentials.ts';
import { MemoryKeyTable } from '../auth/key-table.ts';
import { type AccessRequest, createStreamAccess, type StreamProtocol } from './access.ts';
import type { Selection } from './hub.ts';

const NOW = 1_800_000_000_000;
const ORIGIN = 'https://casino.example';
const game: Selection = { kind: 'game', slug: 'crash' };
const type: Selection = { kind: 'type', type: 'multiplier' };

function setup(require: Partial<Record<StreamProtocol, boolean>> = {}) {
  const secret = randomBytes(32);
  const table = new MemoryKeyTable(secret);
  const all = testKey({ scopes: ['stream:*'] });
  const one = testKey({ scopes: ['stream:game'] });
  const pub = testKey({ scopes: ['stream:*'], origins: [ORIGIN] });
  const none = testKey({ scopes: ['read:rounds'] });
  const limited = testKey({ scopes: ['stream:*'], rateLimit: 2 });
  // As services/api/auth/browser-key.ts makes them: default-port origins of the bound domain.
  const browser = testKey({
    scopes: ['stream:*'],
    origins: ['https://127.0.0.1', 'http://127.0.0.1'],
    boundDomain: '127.0.0.1',
  });
  for (const k of [all, one, pub, none, limited, browser])
    table.apply({ type: 'KeyCreated', value: k.event });
  const access = createStreamAccess({
    table,
    require: { ws: false, sse: false, grpc: true, wt: false, ...require },
  });
  return { secret, table, access, all, one, pub, none, limited, browser };
}

describe('createStreamAccess', () => {
  const s = setup();
  const flipped = (t: string) => `${t.slice(0, -1)}${t.endsWith('0') ? '1' : '0'}`;
  const rows: [string, StreamProtocol, AccessRequest, number | 'ok', string?][] = [
    ['no credential, switch off', 'ws', { credential: undefined, origin: undefined, selection: game }, 'ok'],
    ['empty credential, switch off', 'sse', { credential: '', origin: undefined, selection: type }, 'ok'],
    [
      'no credential, switch on',
      'grpc',
      { credential: undefined, origin: undefined, selection: game },
      401,
      'missing',
    ],
    [
      'malformed, switch off',
      'ws',
      { credential: 'tok_abc', origin: undefined, selection: game },
      401,
      'malformed',
    ],
    [
      'wrong prefix',
      'sse',
      { credential: `xx_live_${'a'.repeat(64)}`, origin: undefined, selection: game },
      401,
      'malformed',
    ],
    [
      'unknown key',
      'wt',
      { credential: `sk_live_${'a'.repeat(64)}`, origin: undefined, selection: game },
      401,
      'unknown',
    ],
    ['valid private key', 'grpc', { credential: s.all.secret, origin: undefined, selection: type }, 'ok'],
    [
      'valid token',
      'ws',
      { credential: s.all.token(s.secret, NOW), origin: undefined, selection: type },
      'ok',
    ],
    [
      'tampered token',
      'ws',
      { credential: flipped(s.all.token(s.secret, NOW)), origin: undefined, selection: game },
      401,
      'malformed',
    ],
    [
      'expired token',
      'ws',
      { credential: s.all.token(s.secret, NOW - 16_000), origin: undefined, selection: game },
      401,
      'expired',
    ],
    ['stream:game on a game', 'sse', { credential: s.one.secret, origin: undefined, selection: game }, 'ok'],
    [
      'stream:game on a type',
      'ws',
      { credential: s.one.secret, origin: undefined, selection: type },
      403,
      'scope',
    ],
    [
      'stream:game on all',
      'grpc',
      { credential: s.one.secret, origin: undefined, selection: { kind: 'all' } },
      403,
      'scope',
    ],
    [
      'no stream scope',
      'sse',
      { credential: s.none.secret, origin: undefined, selection: game },
      403,
      'scope',
    ],
    [
      'explicit scope held',
      'grpc',
      { credential: s.none.secret, origin: undefined, scope: 'read:rounds' },
      'ok',
    ],
    ['public key, right origin', 'ws', { credential: s.pub.secret, origin: ORIGIN, selection: game }, 'ok'],
    [
      'public key, origin variant',
      'ws',
      { credential: s.pub.secret, origin: 'HTTPS://Casino.Example:443', selection: game },
      'ok',
    ],
    [
      'public key, wrong origin',
      'ws',
      { credential: s.pub.secret, origin: 'https://evil.example', selection: game },
      401,
      'origin',
    ],
    [
      'public key, no origin',
      'sse',
      { credential: s.pub.secret, origin: undefined, selection: game },
      401,
      'origin',
    ],
    [
      'public token, wrong origin',
      'wt',
      { credential: s.pub.token(s.secret, NOW), origin: 'https://evil.example', selection: game },
      401,
      'origin',
    ],
    [
      'browser key, its domain on another port',
      'ws',
      { credential: s.browser.token(s.secret, NOW), origin: 'http://127.0.0.1:8080', selection: type },
      'ok',
    ],
    [
      'browser key, default port',
      'sse',
      { credential: s.browser.secret, origin: 'https://127.0.0.1', selection: game },
      'ok',
    ],
    [
      'browser key, another host',
      'ws',
      { credential: s.browser.secret, origin: 'http://127.0.0.2:8080', selection: game },
      401,
      'origin',
    ],
    [
      'browser key, no Origin',
      'grpc',
      { credential: s.browser.secret, origin: undefined, selection: game },
      401,
      'origin',
    ],
    [
      'plain public key, another port',
      'ws',
      { credential: s.pub.secret, origin: 'https://casino.example:8443', selection: game },
      401,
      'origin',
    ],
  ];
  it.each(rows)('%s', async (_name, protocol, req, want, reason) => {
    const v = await s.access.check(protocol, req, NOW);
    if (want === 'ok') expect(v).toMatchObject({ ok: true });
    else expect(v).toMatchObject({ ok: false, status: want, reason });
  });

  it('limits connection attempts per key to its rate_limit a minute, tokens counting against the key', async () => {
    const t = setup();
    const req = (credential: string) => ({ credential, origin: undefined, selection: game });
    expect((await t.access.check('ws', req(t.limited.secret), NOW)).ok).toBe(true);
    expect((await t.access.check('sse', req(t.limited.token(t.secret, NOW)), NOW)).ok).toBe(true);
    const third = await t.access.check('grpc', req(t.limited.secret), NOW);
    expect(third).toMatchObject({ ok: false, status: 429, reason: 'rate_limited' });
    expect(third.ok ? 0 : third.retryAfterS).toBeGreaterThan(0);
    // Another key is unaffected.
    expect((await t.access.check('ws', req(t.all.secret), NOW)).ok).toBe(true);
    t.access.close();
  });

  it('refuses a revoked key and its tokens, and closes the streams it opened, once each', async () => {
    const t = setup();
    const v = await t.access.check(
      'ws',
      { credential: t.all.secret, origin: undefined, selection: game },
      NOW,
    );
    if (!v.ok) throw new Error('expected ok');
    const closed: string[] = [];
    t.access.track(v.principal, () => closed.push('a'), 'ws');
    const untrackB = t.access.track(v.principal, () => closed.push('b'), 'sse');
    t.access.track(undefined, () => closed.push('anonymous'), 'grpc');
    untrackB();
    const token = t.all.token(t.secret, NOW);
    t.table.apply({ type: 'KeyRevoked', value: { key_id: t.all.keyId, at: NOW } });
    t.table.apply({ type: 'KeyRevoked', value: { key_id: t.all.keyId, at: NOW } });
    expect(closed).toEqual(['a']);
    for (const credential of [t.all.secret, token]) {
      expect(
        await t.access.check('ws', { credential, origin: undefined, selection: game }, NOW),
      ).toMatchObject({
        ok: false,
        status: 401,
        reason: 'revoked',
      });
    }
    t.access.close();
  });

  it('closes streams of a deleted key; its token is then unknown', async () => {
    const t = setup();
    const v = await t.access.check(
      'sse',
      { credential: t.one.secret, origin: undefined, selection: game },
      NOW,
    );
    const closed: number[] = [];
    t.access.track(v.ok ? v.principal : undefined, () => closed.push(1), 'wt');
    t.table.apply({ type: 'KeyDeleted', value: { key_id: t.one.keyId, at: NOW } });
    expect(closed).toEqual([1]);
    const r = await t.access.check(
      'sse',
      { credential: t.one.token(t.secret, NOW), origin: undefined, selection: game },
      NOW,
    );
    expect(r).toMatchObject({ ok: false, status: 401, reason: 'unknown' });
    t.access.close();
  });
});
