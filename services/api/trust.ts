/**
 * Whose X-Forwarded-For the API believes: the peer of a request that came in on the proxy's Unix
 * socket (API_SOCKET; who may connect is decided by the file's permissions, so a client on the
 * same host cannot pass itself off as the gateway by connecting to the TCP port), and TCP peers
 * listed in API_TRUST_PROXY (none by default). The rule itself is lib/http/trust.ts's, shared
 * with the edges (EDGE_TRUST_PROXY).
 */
import { type TrustFn, proxyTrust as trustOf } from '../../lib/http/trust.ts';

/** The trust function for fastify's `trustProxy` option. @throws Error naming a malformed address or CIDR. */
export function proxyTrust(trusted: readonly string[]): TrustFn {
  return trustOf(trusted, 'API_TRUST_PROXY');
}
