/**
 * The sandbox as an operator going through a signing-secret rotation (secret.ts, admin.ts): a
 * callback whose webhook-signature lists several signatures is accepted when any one matches its
 * verifying secret (Standard Webhooks), PUT /_sandbox/signing-secret switches the verifying secret at
 * run time (then a request signed by the old secret alone is refused, one signed by both accepted),
 * a malformed secret is a 400 that changes nothing, DELETE goes back to the configured secret, and
 * every refusal for the signature is counted in sandbox_invalid_signatures_total.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signHeaders } from '../../lib/http/callback-client.ts';
import { balanceBody, startTestSandbox, type TestSandbox } from '../../tests/support/sandbox.ts';

const newSecret = () => `whsec_${randomBytes(32).toString('base64')}`;

let sb: TestSandbox;
beforeAll(async () => {
  sb = await startTestSandbox();
});
afterAll(async () => {
  await sb?.close();
});

/** A balance callback signed with each of `secrets`: its HTTP status. */
async function balanceSignedBy(secrets: string[]): Promise<number> {
  const payload = JSON.stringify(balanceBody('rot-user', 'USD'));
  const res = await sb.app.inject({
    method: 'POST',
    url: '/wallet/balance',
    headers: { 'content-type': 'application/json', ...signHeaders('rot-1', payload, secrets, Date.now()) },
    payload,
  });
  return res.statusCode;
}

async function invalidSignatures(): Promise<number> {
  const text = (await sb.app.inject({ method: 'GET', url: '/metrics' })).body;
  const m = /^sandbox_invalid_signatures_total(?:\{[^}]*\})? (\d+)/m.exec(text);
  return Number(m?.[1] ?? Number.NaN);
}

describe('a signing-secret rotation at the sandbox', () => {
  it('accepts a header listing several signatures when one matches, before and after the switch', async () => {
    const rotated = newSecret();
    const stranger = newSecret();
    expect(await invalidSignatures()).toBe(0);
    expect(await balanceSignedBy([rotated, sb.secret])).toBe(200);
    expect(await balanceSignedBy([sb.secret])).toBe(200);
    expect(await balanceSignedBy([rotated])).toBe(401);
    expect(await invalidSignatures()).toBe(1);

    const put = await sb.put('/_sandbox/signing-secret', { secret: rotated });
    expect(put.status).toBe(204);
    expect(put.body).toBe('');
    expect(await balanceSignedBy([rotated, sb.secret])).toBe(200);
    expect(await balanceSignedBy([rotated])).toBe(200);
    expect(await balanceSignedBy([sb.secret])).toBe(401);
    expect(await balanceSignedBy([stranger, sb.secret])).toBe(401);
    expect(await invalidSignatures()).toBe(3);

    const bad = await sb.put('/_sandbox/signing-secret', { secret: 'not-a-secret' });
    expect(bad.status).toBe(400);
    expect(bad.body).toMatch(/secret/);
    expect(await balanceSignedBy([rotated])).toBe(200);
    expect((await sb.put('/_sandbox/signing-secret', { secret: rotated, extra: 1 })).status).toBe(400);

    const reset = await sb.app.inject({ method: 'DELETE', url: '/_sandbox/signing-secret' });
    expect(reset.statusCode).toBe(204);
    expect(await balanceSignedBy([sb.secret])).toBe(200);
    expect(await balanceSignedBy([rotated])).toBe(401);
  });
});
