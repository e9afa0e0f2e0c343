/**
 * The API's listeners: the TCP port (API_HOST:API_PORT), where the peer address
 * is the client, and the proxy's Unix socket (API_SOCKET), where the gateway or nginx forwards the
 * clients it names in X-Forwarded-For (trust.ts). Both feed the one fastify server, so routes,
 * hooks and limits are the same; only the trust differs. The socket file is created with
 * API_SOCKET_MODE (600 by default: only the API's own user may connect) and removed at close.
 */
import { chmod, lstat, mkdir, rm } from 'node:fs/promises';
import { connect, createServer, type Server } from 'node:net';
import { dirname } from 'node:path';
import type { FastifyInstance } from 'fastify';
import type { ApiConfig } from './config.ts';

export interface ApiListeners {
  /** The bound TCP port. */
  readonly port: number;
  /** The Unix socket path, or '' when there is none. */
  readonly socket: string;
  /** Stops accepting on the Unix socket and removes its file; open connections close with the app. */
  closeSocket(): Promise<void>;
}

/**
 * Removes a stale socket file left by a killed process; refuses to remove anything else, or a
 * socket another process still answers on.
 * @throws Error naming the path when it is not a socket or is in use.
 */
async function removeStaleSocket(path: string): Promise<void> {
  const st = await lstat(path).catch(() => undefined);
  if (!st) return;
  if (!st.isSocket()) throw new Error(`API_SOCKET ${path} exists and is not a socket`);
  const live = await new Promise<boolean>((resolve) => {
    const probe = connect(path, () => {
      probe.destroy();
      resolve(true);
    });
    probe.once('error', () => resolve(false));
  });
  if (live) throw new Error(`API_SOCKET ${path} is in use by another process`);
  await rm(path, { force: true });
}

/**
 * Listens on the TCP port and, when configured, the Unix socket.
 * @param opts.socket overrides API_SOCKET ('' for none), opts.port overrides API_PORT (tests: 0).
 * @throws when a listener cannot be opened (port in use, socket directory not writable).
 */
export async function listenApi(
  app: FastifyInstance,
  config: Pick<ApiConfig, 'api'>,
  opts: { socket?: string; port?: number } = {},
): Promise<ApiListeners> {
  await app.listen({ host: config.api.host, port: opts.port ?? config.api.port });
  const addr = app.server.address();
  const port = typeof addr === 'object' && addr ? addr.port : config.api.port;
  const path = opts.socket ?? config.api.socket;
  if (path === '') return { port, socket: '', closeSocket: async () => {} };
  await mkdir(dirname(path), { recursive: true });
  await removeStaleSocket(path);
  // Connections on the socket are handed to the same HTTP server as the TCP ones.
  const unix: Server = createServer((sock) => app.server.emit('connection', sock));
  await new Promise<void>((resolve, reject) => {
    unix.once('error', reject);
    unix.listen(path, () => {
      unix.off('error', reject);
      resolve();
    });
  });
  await chmod(path, config.api.socketMode);
  return {
    port,
    socket: path,
    async closeSocket() {
      // Stops accepting at once; the connections it accepted belong to the HTTP server, which
      // closes them with the app (waiting for them here would wait for app.close()).
      unix.close();
      await rm(path, { force: true });
    },
  };
}
