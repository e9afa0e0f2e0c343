import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import type { CertificateInfo } from './cert.ts';
import { createHttpHandler } from './http.ts';

const sha256 = Uint8Array.from({ length: 32 }, (_, i) => i);
const certificate: CertificateInfo = {
  certPem: '',
  keyPem: '',
  sha256,
  notBefore: new Date('2026-01-01T00:00:00Z'),
  notAfter: new Date('2026-01-14T00:00:00Z'),
  source: 'development',
  certFile: '/tmp/cert.pem',
};

function handler(ready = true) {
  const register = new Registry();
  return createHttpHandler({ certificate, register, isReady: () => ready });
}
const get = (path: string, method = 'GET') => new Request(`http://127.0.0.1:8088${path}`, { method });

describe('WebTransport edge HTTP endpoints', () => {
  it('/cert-hash gives the SHA-256 of the certificate in base64 and hex, uncached, with CORS', async () => {
    const res = await handler()(get('/cert-hash'));
    expect(res.status).toBe(200);
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(await res.json()).toEqual({
      algorithm: 'sha-256',
      hash: Buffer.from(sha256).toString('base64'),
      hex: '000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f',
      expires_at: '2026-01-14T00:00:00.000Z',
      source: 'development',
    });
  });

  it('/ready follows readiness; /health always answers', async () => {
    expect((await handler(false)(get('/ready'))).status).toBe(503);
    expect((await handler(true)(get('/ready'))).status).toBe(200);
    expect(await (await handler(false)(get('/health'))).json()).toEqual({ status: 'ok' });
  });

  it('/metrics is Prometheus text', async () => {
    const res = await handler()(get('/metrics'));
    expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
  });

  it('answers preflights, refuses other methods and unknown paths', async () => {
    const pre = await handler()(get('/cert-hash', 'OPTIONS'));
    expect(pre.status).toBe(204);
    expect(pre.headers.get('access-control-allow-methods')).toBe('GET, POST, OPTIONS');
    expect((await handler()(get('/cert-hash', 'POST'))).status).toBe(405);
    const missing = await handler()(get('/wt'));
    expect(missing.status).toBe(404);
    expect(await missing.json()).toEqual({ error: 'Not found', success: false });
  });
});
