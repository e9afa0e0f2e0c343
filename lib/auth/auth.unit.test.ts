import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { credentialFromHeaders, newKeyId, newSecret, parseCredential, secretHash } from './credentials.ts';
import { MemoryKeyTable } from './key-table.ts';
import { normalizeOrigin, originAllowed } from './origins.ts';
import { hasScope, streamScope } from './scopes.ts';
import { issueToken, verifyToken } from './tokens.ts';
import { authenticate } from './verifier.ts';

const SECRET = randomBytes(32);
const T0 = 1_800_000_000_000;

function flipHexDigit(s: string, index: number): string {
  const c = s[index] as string;
  return s.slice(0, index) + (c === '0' ? '1' : '0') + s.slice(index + 1);
}

describe('parseCredential', () => {
  it.each([
    [`sk_live_${'a'.repeat(64)}`, 'private'],
    [`pk_live_${'0'.repeat(32)}`, 'public'],
    [`pk_live_${'f'.repeat(64)}`, 'public'],
    [`tok_${'ab'.repeat(45)}`, 'token'],
  ])('accepts %s as %s', (s, kind) => {
    expect(parseCredential(s)?.kind).toBe(kind);
  });

  it.each([
    ['wrong prefix', `xk_live_${'a'.repeat(64)}`],
    ['short private', `sk_live_${'a'.repeat(63)}`],
    ['long private', `sk_live_${'a'.repeat(65)}`],
    ['upper-case hex', `sk_live_${'A'.repeat(64)}`],
    ['non-hex', `sk_live_${'g'.repeat(64)}`],
    ['short public', `pk_live_${'a'.repeat(31)}`],
    ['empty token', 'tok_'],
    ['padded', ` sk_live_${'a'.repeat(64)}`],
    ['huge', `tok_${'a'.repeat(10_000)}`],
  ])('rejects %s', (_n, s) => {
    expect(parseCredential(s)).toBeNull();
  });

  it('generates well-formed ids and secrets and hashes to 64 hex', () => {
    expect(newKeyId()).toMatch(/^key_[0-9a-f]{16}$/);
    expect(parseCredential(newSecret('private'))?.kind).toBe('private');
    expect(parseCredential(newSecret('public'))?.kind).toBe('public');
    expect(secretHash('x')).toMatch(/^[0-9a-f]{64}$/);
  });

  it('reads X-API-Key first, then Authorization: Bearer', () => {
    expect(credentialFromHeaders({ 'x-api-key': 'a', authorization: 'Bearer b' })).toBe('a');
    expect(credentialFromHeaders({ authorization: 'Bearer b' })).toBe('b');
    expect(credentialFromHeaders({ authorization: 'Basic xyz' })).toBe('Basic xyz');
    expect(credentialFromHeaders({})).toBeUndefined();
  });
});

describe('tokens', () => {
  const keyId = 'key_0123456789abcdef';

  it('round-trips key id and expiry', () => {
    const { token, expiresAtMs } = issueToken(SECRET, keyId, T0);
    expect(expiresAtMs).toBe(T0 + 15_000);
    expect(verifyToken(SECRET, token, T0)).toEqual({ ok: true, keyId, expiresAtMs });
  });

  it('fails with any single hex digit flipped', () => {
    const { token } = issueToken(SECRET, keyId, T0);
    for (let i = 4; i < token.length; i += 7) {
      expect(verifyToken(SECRET, flipHexDigit(token, i), T0)).toEqual({ ok: false, reason: 'malformed' });
    }
  });

  it('fails under another signing secret', () => {
    const { token } = issueToken(SECRET, keyId, T0);
    expect(verifyToken(randomBytes(32), token, T0).ok).toBe(false);
  });

  it('is valid at exactly 15 s and expired 1 s later', () => {
    const { token } = issueToken(SECRET, keyId, T0);
    expect(verifyToken(SECRET, token, T0 + 15_000).ok).toBe(true);
    expect(verifyToken(SECRET, token, T0 + 16_000)).toEqual({ ok: false, reason: 'expired' });
  });
});

describe('origins', () => {
  it.each([
    ['HTTPS://Example.COM', 'https://example.com'],
    ['https://example.com/', 'https://example.com'],
    ['https://example.com:443', 'https://example.com'],
    ['http://example.com:8080', 'http://example.com:8080'],
  ])('normalises %s', (input, out) => {
    expect(normalizeOrigin(input)).toBe(out);
  });

  it.each([[undefined], [''], ['null'], ['https://example.com/path'], ['ftp://example.com']])(
    'rejects %s',
    (input) => {
      expect(normalizeOrigin(input)).toBeNull();
    },
  );

  it('matches case and trailing-slash variants, not other schemes or ports', () => {
    const allowed = ['https://example.com'];
    expect(originAllowed('https://EXAMPLE.com/', allowed)).toBe(true);
    expect(originAllowed('http://example.com', allowed)).toBe(false);
    expect(originAllowed('https://example.com:8443', allowed)).toBe(false);
    expect(originAllowed(undefined, allowed)).toBe(false);
  });
});

describe('scopes', () => {
  it('admin covers all; stream:* covers stream:game, not the reverse', () => {
    expect(hasScope({ scopes: ['admin'] }, 'publish:rounds')).toBe(true);
    // A binding to a game is never implied: an admin key writes no round.
    expect(hasScope({ scopes: ['admin'] }, 'publish:rounds:slot')).toBe(false);
    expect(hasScope({ scopes: ['publish:rounds:slot'] }, 'publish:rounds:slot')).toBe(true);
    expect(hasScope({ scopes: ['stream:*'] }, 'stream:game')).toBe(true);
    expect(hasScope({ scopes: ['stream:game'] }, streamScope('type'))).toBe(false);
    expect(hasScope({ scopes: ['read:games'] }, 'read:rounds')).toBe(false);
  });
});

describe('authenticate', () => {
  const priv = newSecret('private');
  const pub = newSecret('public');
  const table = new MemoryKeyTable(SECRET);
  const base = { rate_limit: 100, admin: false, visitor_id: null, bound_domain: null, created_at: T0 };
  table.apply({
    type: 'KeyCreated',
    value: {
      ...base,
      key_id: 'key_00000000000000a1',
      name: 'server',
      kind: 'private',
      secret_sha256: secretHash(priv),
      scopes: ['read:rounds'],
      allowed_origins: [],
    },
  });
  table.apply({
    type: 'KeyCreated',
    value: {
      ...base,
      key_id: 'key_00000000000000b2',
      name: 'browser',
      kind: 'public',
      secret_sha256: secretHash(pub),
      scopes: ['stream:game'],
      allowed_origins: ['https://example.com'],
    },
  });

  it('accepts a private key and checks scopes (403 without)', () => {
    expect(authenticate(table, { credential: priv, now: T0 }).ok).toBe(true);
    expect(authenticate(table, { credential: priv, now: T0, scope: 'admin' })).toMatchObject({
      ok: false,
      status: 403,
      reason: 'scope',
    });
  });

  it.each([
    [undefined, 'missing'],
    ['sk_live_xyz', 'malformed'],
    [newSecret('private'), 'unknown'],
  ])('401s %s as %s', (credential, reason) => {
    expect(authenticate(table, { credential, now: T0 })).toMatchObject({ ok: false, status: 401, reason });
  });

  it('needs a matching Origin for a public key and its tokens', () => {
    expect(authenticate(table, { credential: pub, now: T0 })).toMatchObject({ reason: 'origin' });
    expect(authenticate(table, { credential: pub, origin: 'https://evil.com', now: T0 })).toMatchObject({
      reason: 'origin',
    });
    expect(authenticate(table, { credential: pub, origin: 'https://Example.com/', now: T0 }).ok).toBe(true);
    const { token } = issueToken(SECRET, 'key_00000000000000b2', T0);
    expect(authenticate(table, { credential: token, now: T0 })).toMatchObject({ reason: 'origin' });
    expect(authenticate(table, { credential: token, origin: 'https://example.com', now: T0 }).ok).toBe(true);
  });

  it('refuses a revoked key and its tokens, then a deleted one as unknown', () => {
    const t = new MemoryKeyTable(SECRET);
    for (const e of table.list()) {
      t.apply({
        type: 'KeyCreated',
        value: {
          ...base,
          key_id: e.keyId,
          name: e.name,
          kind: e.kind,
          secret_sha256: e.secretHash,
          scopes: [...e.scopes],
          allowed_origins: [...e.allowedOrigins],
        },
      });
    }
    const { token } = issueToken(SECRET, 'key_00000000000000a1', T0);
    const changed: string[] = [];
    t.onChange((id, rec) => changed.push(`${id}:${rec ? 'live' : 'gone'}`));
    t.apply({ type: 'KeyRevoked', value: { key_id: 'key_00000000000000a1', at: T0 } });
    expect(authenticate(t, { credential: priv, now: T0 })).toMatchObject({ reason: 'revoked' });
    expect(authenticate(t, { credential: token, now: T0 })).toMatchObject({ reason: 'revoked' });
    t.apply({ type: 'KeyDeleted', value: { key_id: 'key_00000000000000a1', at: T0 } });
    t.apply({ type: 'tombstone', keyId: 'key_00000000000000a1' });
    expect(authenticate(t, { credential: token, now: T0 })).toMatchObject({ reason: 'unknown' });
    expect(changed).toEqual(['key_00000000000000a1:live', 'key_00000000000000a1:gone']);
  });
});
