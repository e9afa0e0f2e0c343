/**
 * The QUIC listener's certificate: the configured one (WT_CERT_FILE / WT_KEY_FILE, production)
 * or the development one that scripts/dev-cert.sh keeps in WT_DEV_CERT_DIR.
 *
 * A browser trusts a self-signed WebTransport server only through `serverCertificateHashes`,
 * which it accepts only for a certificate valid at most 14 days (W3C WebTransport, "verify a
 * certificate hash"); the pages read the hash from `/cert-hash` (`certHashBody`).
 */

import { Buffer } from 'node:buffer';
import { createHash, X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { WebTransportError } from './errors.ts';
import type { WtConfig } from './settings.ts';

/** Longest validity a browser accepts with `serverCertificateHashes`, ms. */
export const MAX_HASHED_VALIDITY_MS = 14 * 24 * 3600 * 1000;

export interface CertificateInfo {
  readonly certPem: string;
  readonly keyPem: string;
  /** SHA-256 of the DER encoding of the leaf certificate. */
  readonly sha256: Uint8Array;
  readonly notBefore: Date;
  readonly notAfter: Date;
  readonly source: 'configured' | 'development';
  readonly certFile: string;
}

/** A certificate that cannot be used; the message says what to do. */
export class CertificateError extends WebTransportError {
  declare readonly code: 'CERTIFICATE_INVALID';

  constructor(message: string) {
    super('CERTIFICATE_INVALID', message);
  }
}

function read(file: string, what: string, hint: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (err) {
    throw new CertificateError(`cannot read the ${what} ${file} (${(err as Error).message})${hint}`);
  }
}

/**
 * Loads and checks the certificate at time `now` (Unix ms).
 * @throws CertificateError when a file is missing or unreadable, the PEM does not parse, the
 *   certificate is not yet or no longer valid, or a development certificate is valid longer than
 *   14 days (the browser would refuse its hash).
 */
export function loadCertificate(wt: WtConfig['wt'], now: number): CertificateInfo {
  const source = wt.certFile ? 'configured' : 'development';
  const certFile = wt.certFile ?? join(wt.devCertDir, 'cert.pem');
  const keyFile = wt.keyFile ?? join(wt.devCertDir, 'key.pem');
  const hint = source === 'development' ? '; run `bash scripts/dev-cert.sh` to create it' : '';
  const certPem = read(certFile, 'certificate', hint);
  const keyPem = read(keyFile, 'private key', hint);
  let x509: X509Certificate;
  try {
    x509 = new X509Certificate(certPem);
  } catch (err) {
    throw new CertificateError(`${certFile} is not a PEM certificate (${(err as Error).message})`);
  }
  const notBefore = new Date(x509.validFrom);
  const notAfter = new Date(x509.validTo);
  if (now < notBefore.getTime() || now >= notAfter.getTime()) {
    throw new CertificateError(
      `certificate ${certFile} is valid from ${notBefore.toISOString()} to ${notAfter.toISOString()}, not now${hint}`,
    );
  }
  if (source === 'development' && notAfter.getTime() - notBefore.getTime() > MAX_HASHED_VALIDITY_MS) {
    throw new CertificateError(
      `development certificate ${certFile} is valid longer than 14 days; browsers refuse its hash (run \`bash scripts/dev-cert.sh --force\`)`,
    );
  }
  const sha256 = new Uint8Array(createHash('sha256').update(x509.raw).digest());
  return { certPem, keyPem, sha256, notBefore, notAfter, source, certFile };
}

/** The `/cert-hash` body: what a page passes as `serverCertificateHashes[0]`. */
export interface CertHashBody {
  algorithm: 'sha-256';
  /** Base64 of the SHA-256 of the DER certificate. */
  hash: string;
  hex: string;
  /** ISO 8601; the page should fetch the hash again after it. */
  expires_at: string;
  /** `development`: self-signed, use the hash; `configured`: normally CA-issued, no hash needed. */
  source: CertificateInfo['source'];
}

export function certHashBody(info: CertificateInfo): CertHashBody {
  return {
    algorithm: 'sha-256',
    hash: Buffer.from(info.sha256).toString('base64'),
    hex: Buffer.from(info.sha256).toString('hex'),
    expires_at: info.notAfter.toISOString(),
    source: info.source,
  };
}
