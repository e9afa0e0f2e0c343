import { describe, expect, it } from 'vitest';
import type { KeyCreated } from '../../../schemas/generated/avro.ts';
import { foldKeyEvents } from './projection.ts';

const created = (key_id: string, name = 'k'): KeyCreated => ({
  key_id,
  name,
  kind: 'private',
  secret_sha256: '0'.repeat(64),
  scopes: ['read:games'],
  rate_limit: 1000,
  allowed_origins: [],
  admin: false,
  visitor_id: null,
  bound_domain: null,
  created_at: 1,
});

describe('foldKeyEvents', () => {
  it('folds a revoke and a delete into the creation of the same batch', () => {
    const [a, b] = foldKeyEvents([
      { type: 'KeyCreated', value: created('key_a') },
      { type: 'KeyCreated', value: created('key_b') },
      { type: 'KeyRevoked', value: { key_id: 'key_a', at: 5 } },
      { type: 'KeyRevoked', value: { key_id: 'key_a', at: 9 } },
      { type: 'KeyDeleted', value: { key_id: 'key_b', at: 6 } },
      { type: 'tombstone', keyId: 'key_b' },
    ]);
    expect(a).toMatchObject({ keyId: 'key_a', revokedAt: 5, deleted: false });
    expect(a?.created?.key_id).toBe('key_a');
    expect(b).toMatchObject({ keyId: 'key_b', revokedAt: null, deleted: true });
  });

  it('a re-creation after a delete (same browser pair) starts a fresh row', () => {
    const [p] = foldKeyEvents([
      { type: 'KeyDeleted', value: { key_id: 'key_a', at: 1 } },
      { type: 'KeyCreated', value: created('key_a', 'again') },
    ]);
    expect(p).toMatchObject({ deleted: false, revokedAt: null, created: { name: 'again' } });
  });

  it('a revoke without a creation in the batch carries no row', () => {
    expect(foldKeyEvents([{ type: 'KeyRevoked', value: { key_id: 'key_x', at: 3 } }])).toEqual([
      { keyId: 'key_x', created: null, revokedAt: 3, deleted: false },
    ]);
  });
});
