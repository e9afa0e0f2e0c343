import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { signHeaders } from './callback-client.ts';

/** A Standard Webhooks secret (`whsec_` + base64 of 32 bytes). */
const secret = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;

describe('signHeaders', () => {
  it('produces Standard Webhooks headers that the library verifies', () => {
    const nowMs = 1_700_000_000_123;
    const h = signHeaders('win-41', '{"a":1}', secret, nowMs);
    expect(h['webhook-id']).toBe('win-41');
    expect(h['webhook-timestamp']).toBe('1700000000');
    expect(h['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/=]+$/);
    const wh = new Webhook(secret);
    // verify() checks the timestamp against the real clock, so sign "now" for the round trip.
    const live = signHeaders('win-41', '{"a":1}', secret, Date.now());
    expect(() => wh.verify('{"a":1}', live)).not.toThrow();
    expect(() => wh.verify('{"a":2}', live)).toThrow();
  });
});
