/**
 * The edge's configuration (lib/config/core.ts).
 *
 * Its own settings: GRPC_HOST / GRPC_PORT, the gRPC listener, service datastream.DataStream
 * (127.0.0.1 / 50051, docs/contract.md "Streaming endpoints"; 0 = any free port); GRPC_MAX_BUFFER_BYTES, a gRPC
 * stream whose unsent bytes pass this is ended with RESOURCE_EXHAUSTED (1 MiB).
 * Shared: EDGE_* (EDGE_TRUST_PROXY: whose X-Forwarded-For names the client), KAFKA_*, TOPIC_*, DATABASE_*,
 * AUTH_*, LOG_LEVEL, SHUTDOWN_TIMEOUT_MS, and the failed-credential budget the API applies too:
 * RATE_LIMIT_AUTH_FAILURES, RATE_LIMIT_WINDOW_MS, RATE_LIMIT_REDIS_URL (lib/config/shared.ts);
 * STREAM_* (catch-up rates, subscriptions per connection: lib/stream/config.ts).
 */
import { configLoader, host, int, port, section } from '../../lib/config/core.ts';
import {
  authSection,
  dbSection,
  edgeSection,
  failureBudgetSection,
  kafkaSection,
  processSection,
} from '../../lib/config/shared.ts';
import { streamSection } from '../../lib/stream/config.ts';

export const grpcSection = section({
  name: 'grpc',
  // Not `GRPC_`: grpc-js reads its own GRPC_VERBOSITY, GRPC_TRACE, GRPC_DEFAULT_SSL_ROOTS_FILE_PATH.
  prefixes: [],
  shape: {
    GRPC_HOST: host.default('127.0.0.1'),
    GRPC_PORT: port.default(50051),
    GRPC_MAX_BUFFER_BYTES: int(1024, 1 << 30).default(1 << 20),
  },
  build: (r) => ({ host: r.GRPC_HOST, port: r.GRPC_PORT, maxBufferBytes: r.GRPC_MAX_BUFFER_BYTES }),
});

/** The edge's validated, frozen configuration. @throws ConfigError naming each bad or unknown setting. */
export const loadEdgeConfig = configLoader([
  kafkaSection,
  dbSection,
  processSection,
  authSection,
  edgeSection,
  grpcSection,
  streamSection,
  failureBudgetSection,
]);
export type EdgeConfig = ReturnType<typeof loadEdgeConfig>;
