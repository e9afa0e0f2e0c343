import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../tests/support/config.ts';
import { CertificateError, certHashBody, loadCertificate } from './cert.ts';

/** Self-signed ECDSA P-256 certificates made by openssl: 13 and 30 days from 2026-11-22T00:32:53Z. */
const CERT_13_DAYS = `-----BEGIN CERTIFICATE-----
MIIBmTCCAT+gAwIBAgIUZmw/n+phGoBBKX89GtDAt1NYvn8wCgYIKoZIzj0EAwIw
FDESMBAGA1UEAwwJbG9jYWxob3N0MB4XDTI2MTEyMjAwMzI1M1oXDTI2MTIwNTAw
MzI1M1owFDESMBAGA1UEAwwJbG9jYWxob3N0MFkwEwYHKoZIzj0CAQYIKoZIzj0D
AQcDQgAElkmxNUnAoYIXxrAuCm5znihpyyDU3utAbJxfKdS1i/GuOj2sT5NRZWGe
96+hsnsm9ZReXzoEccdlfGOoBh5yjaNvMG0wHQYDVR0OBBYEFBPDc8bKjBwanzBi
MqZHYAc/lKjPMB8GA1UdIwQYMBaAFBPDc8bKjBwanzBiMqZHYAc/lKjPMA8GA1Ud
EwEB/wQFMAMBAf8wGgYDVR0RBBMwEYIJbG9jYWxob3N0hwR/AAABMAoGCCqGSM49
BAMCA0gAMEUCIFyj36fqKM4/8jmAkBIDZEK9G37/Rv8HJ3wNMT8t5FIzAiEAtd+/
3QmvxiKmRw78oLqtNZEHCn99JHHa6Ln9B3N6D10=
-----END CERTIFICATE-----`;
const CERT_30_DAYS = `-----BEGIN CERTIFICATE-----
MIIBmjCCAT+gAwIBAgIUUymJK//xQWK8yCDa/X3t/lOmAGcwCgYIKoZIzj0EAwIw
FDESMBAGA1UEAwwJbG9jYWxob3N0MB4XDTI2MTEyMjAwMzI1M1oXDTI2MTIyMjAw
MzI1M1owFDESMBAGA1UEAwwJbG9jYWxob3N0MFkwEwYHKoZIzj0CAQYIKoZIzj0D
AQcDQgAEoTfviRbE/qQojWVno6RCNYlSM9MKwr5jmxpzxZEReosYja1iLzqfu8Ny
IKsZ0QDeKQUpyDXXIAGD/cdM7kUkdaNvMG0wHQYDVR0OBBYEFJ37uQ1oLzAq7D56
WKHHK/kuk5LqMB8GA1UdIwQYMBaAFJ37uQ1oLzAq7D56WKHHK/kuk5LqMA8GA1Ud
EwEB/wQFMAMBAf8wGgYDVR0RBBMwEYIJbG9jYWxob3N0hwR/AAABMAoGCCqGSM49
BAMCA0kAMEYCIQCiKq2nRSizZgnrtzFUL72jFDTOUnzaGCcAG29WNyguYwIhAMHr
DssCMDLBEyOXpoReeq273IrJr0+9incu3hiB8sVA
-----END CERTIFICATE-----`;
/** `openssl x509 -outform der | sha256sum` of CERT_13_DAYS. */
const SHA256_13_DAYS = '965f7b84e121dbe4e526c2a7e2753e4bb28c3770986e39335968f30124020695';
const VALID_AT = Date.parse('2026-11-25T00:00:00Z');

const dir = mkdtempSync(join(tmpdir(), 'wt-cert-unit-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function devDir(cert: string): string {
  const d = mkdtempSync(join(dir, 'dev-'));
  writeFileSync(join(d, 'cert.pem'), cert);
  writeFileSync(join(d, 'key.pem'), 'the key is read, not parsed, here');
  return d;
}

describe('loadCertificate', () => {
  it('hashes the DER certificate and reads its validity', () => {
    const info = loadCertificate(loadConfig({ WT_DEV_CERT_DIR: devDir(CERT_13_DAYS) }).wt, VALID_AT);
    expect(Buffer.from(info.sha256).toString('hex')).toBe(SHA256_13_DAYS);
    expect(info.notAfter.toISOString()).toBe('2026-12-05T00:32:53.000Z');
    expect(info.source).toBe('development');
    expect(certHashBody(info)).toEqual({
      algorithm: 'sha-256',
      hash: Buffer.from(SHA256_13_DAYS, 'hex').toString('base64'),
      hex: SHA256_13_DAYS,
      expires_at: '2026-12-05T00:32:53.000Z',
      source: 'development',
    });
  });

  it('tells how to create a missing development certificate', () => {
    const wt = loadConfig({ WT_DEV_CERT_DIR: join(dir, 'none') }).wt;
    expect(() => loadCertificate(wt, VALID_AT)).toThrow(CertificateError);
    expect(() => loadCertificate(wt, VALID_AT)).toThrow(/scripts\/dev-cert\.sh/);
  });

  it('refuses a certificate outside its validity', () => {
    const wt = loadConfig({ WT_DEV_CERT_DIR: devDir(CERT_13_DAYS) }).wt;
    expect(() => loadCertificate(wt, Date.parse('2026-12-06T00:00:00Z'))).toThrow(/not now/);
  });

  it('refuses a development certificate valid longer than 14 days, but not a configured one', () => {
    const d = devDir(CERT_30_DAYS);
    expect(() => loadCertificate(loadConfig({ WT_DEV_CERT_DIR: d }).wt, VALID_AT)).toThrow(/14 days/);
    const configured = loadConfig({ WT_CERT_FILE: join(d, 'cert.pem'), WT_KEY_FILE: join(d, 'key.pem') }).wt;
    expect(loadCertificate(configured, VALID_AT).source).toBe('configured');
  });

  it('refuses a file that is not a PEM certificate', () => {
    const wt = loadConfig({ WT_DEV_CERT_DIR: devDir('not a certificate') }).wt;
    expect(() => loadCertificate(wt, VALID_AT)).toThrow(/not a PEM certificate/);
  });
});
