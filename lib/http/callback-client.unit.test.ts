import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { signingSecretsAt } from '../../rules/wallet/signing.ts';
import { createCallbackClient, signHeaders } from './callback-client.ts';

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

describe('signing with every valid secret (a rotation overlap)', () => {
  const oldSecret = secret;
  const newSecret = `whsec_${Buffer.alloc(32, 9).toString('base64')}`;
  const third = `whsec_${Buffer.alloc(32, 11).toString('base64')}`;
  const op = { signingSecret: newSecret, previousSigningSecret: oldSecret, previousSecretValidUntil: 0 };
  const body = '{"action":"win"}';

  it('carries two space-delimited signatures during the overlap, each verified by its own secret', () => {
    const now = Date.now();
    const secrets = signingSecretsAt({ ...op, previousSecretValidUntil: now + 300_000 }, now);
    expect(secrets).toEqual([newSecret, oldSecret]);
    const h = signHeaders('win-7', body, secrets, now);
    expect(h['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/=]+ v1,[A-Za-z0-9+/=]+$/);
    // Each signature is exactly the one its secret makes alone, in the order given.
    expect(h['webhook-signature']).toBe(
      `${signHeaders('win-7', body, newSecret, now)['webhook-signature']} ${signHeaders('win-7', body, oldSecret, now)['webhook-signature']}`,
    );
    expect(() => new Webhook(oldSecret).verify(body, h)).not.toThrow();
    expect(() => new Webhook(newSecret).verify(body, h)).not.toThrow();
    expect(() => new Webhook(third).verify(body, h)).toThrow();
  });

  it('carries the new signature alone once the overlap is over', () => {
    const now = Date.now();
    const secrets = signingSecretsAt({ ...op, previousSecretValidUntil: now }, now);
    expect(secrets).toEqual([newSecret]);
    const h = signHeaders('win-7', body, secrets, now);
    expect((h['webhook-signature'] ?? '').split(' ')).toHaveLength(1);
    expect(() => new Webhook(newSecret).verify(body, h)).not.toThrow();
    expect(() => new Webhook(oldSecret).verify(body, h)).toThrow();
  });

  it('signs with the current secret alone when there was never a rotation', () => {
    expect(signingSecretsAt({ signingSecret: newSecret }, 5)).toEqual([newSecret]);
    expect(signingSecretsAt({ ...op, previousSigningSecret: null, previousSecretValidUntil: 10 }, 5)).toEqual(
      [newSecret],
    );
    expect(() => signHeaders('win-7', body, [], Date.now())).toThrow('no signing secret');
  });

  it('sends the signed headers it used and reports them with the exchange', async () => {
    const seen: string[] = [];
    const server = createServer((req, res) => {
      seen.push(String(req.headers['webhook-signature']));
      res.end('{}');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const client = createCallbackClient(1);
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/wallet/win`;
      const ex = await client.send(
        { method: 'POST', url, webhookId: 'win-8', body: { a: 1 } },
        [newSecret, oldSecret],
        1000,
        Date.now(),
      );
      expect(ex).toMatchObject({ type: 'answer', status: 200 });
      expect(ex.headers['content-type']).toBe('application/json');
      expect(ex.headers['webhook-signature']).toBe(seen[0]);
      expect(seen[0]?.split(' ')).toHaveLength(2);
    } finally {
      client.close();
      server.close();
    }
  });
});
