/**
 * The WebTransport edge's configuration sections (lib/config/core.ts); config.ts loads them from
 * `Deno.env`. Apart from it so Node code (tests) can load them without Deno's globals.
 *
 * Its own settings (environment variable → meaning, default):
 * - WT_HOST: interface of the QUIC (UDP) listener and its plain HTTP server (127.0.0.1).
 * - WT_PORT: WebTransport over HTTP/3, `https://{host}:4433/wt` of docs/contract.md (4433; 0 = any free port).
 * - WT_HTTP_PORT: the HTTP server: /health, /ready, /cert-hash, /metrics (8088; 0 = any).
 * - WT_CERT_FILE / WT_KEY_FILE: PEM certificate chain and private key of the QUIC listener (production);
 *   both or neither. Unset: the development certificate in WT_DEV_CERT_DIR (scripts/dev-cert.sh).
 * - WT_DEV_CERT_DIR: where scripts/dev-cert.sh keeps cert.pem and key.pem (.data/webtransport).
 * - WT_MAX_SESSIONS: open WebTransport sessions per edge process; beyond it a session is refused with 503 (10000).
 * - WT_HANDSHAKE_TIMEOUT_MS: a QUIC connection that has not sent its CONNECT request by then is closed (10000 ms).
 * Shared: EDGE_DRAIN_MS (and the other EDGE_*), KAFKA_*, TOPIC_*, AUTH_*, LOG_LEVEL, SHUTDOWN_TIMEOUT_MS,
 * STREAM_* (catch-up rates, subscriptions per session: lib/stream/config.ts).
 */
import { z } from 'zod';
import { type ConfigOf, dataPath, host, int, port, section } from '../../lib/config/core.ts';
import {
  authSection,
  edgeSection,
  failureBudgetSection,
  kafkaSection,
  processSection,
} from '../../lib/config/shared.ts';
import { ConfigError } from '../../lib/errors.ts';
import { streamSection } from '../../lib/stream/config.ts';

export const wtSection = section({
  name: 'wt',
  prefixes: ['WT_'],
  shape: {
    WT_HOST: host.default('127.0.0.1'),
    WT_PORT: port.default(4433),
    WT_HTTP_PORT: port.default(8088),
    WT_CERT_FILE: z.string().min(1).optional(),
    WT_KEY_FILE: z.string().min(1).optional(),
    WT_DEV_CERT_DIR: dataPath('webtransport'),
    WT_MAX_SESSIONS: int(1, 1_000_000).default(10_000),
    WT_HANDSHAKE_TIMEOUT_MS: int(100, 600_000).default(10_000),
  },
  build: (r) => {
    if ((r.WT_CERT_FILE === undefined) !== (r.WT_KEY_FILE === undefined))
      throw new ConfigError('WT_CERT_FILE / WT_KEY_FILE: set both or neither');
    return {
      host: r.WT_HOST,
      port: r.WT_PORT,
      httpPort: r.WT_HTTP_PORT,
      /** Configured certificate and key files, or null for the development certificate in `devCertDir`. */
      certFile: r.WT_CERT_FILE ?? null,
      keyFile: r.WT_KEY_FILE ?? null,
      devCertDir: r.WT_DEV_CERT_DIR,
      maxSessions: r.WT_MAX_SESSIONS,
      handshakeTimeoutMs: r.WT_HANDSHAKE_TIMEOUT_MS,
    };
  },
});

/** The WebTransport edge's sections. */
export const WT_SECTIONS = [
  kafkaSection,
  processSection,
  authSection,
  edgeSection,
  wtSection,
  streamSection,
  failureBudgetSection,
] as const;
export type WtConfig = ConfigOf<typeof WT_SECTIONS>;
