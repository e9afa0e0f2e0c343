/**
 * Whose X-Forwarded-For a listener believes, and the client address it then counts (the API's
 * per-IP limits, and the failed-credential budget of the API and both edges: lib/auth/failure-budget.ts).
 *
 * proxy-addr's rule, as fastify applies it with a `trustProxy` function: starting at the socket's
 * peer (hop 0), each hop that is trusted hands over to the X-Forwarded-For entry on its left; the
 * first untrusted address, or the last entry, is the client.
 */
import { BlockList, isIP } from 'node:net';

/** Decides whether the address at `hop` (0: the socket's peer) is a proxy whose header is believed. */
export type TrustFn = (address: string | undefined, hop: number) => boolean;

/**
 * The trust function for a list of addresses and CIDRs (fastify's `trustProxy` option). A peer
 * without an address (a Unix socket) is trusted as the first hop only: who may connect to a
 * socket file is decided by its permissions.
 * @throws Error naming a malformed address or CIDR (`setting` names the setting in the text).
 */
export function proxyTrust(trusted: readonly string[], setting = 'API_TRUST_PROXY'): TrustFn {
  const list = new BlockList();
  for (const entry of trusted) {
    const [addr = '', bits] = entry.split('/');
    const family = isIP(addr);
    if (family === 0) throw new Error(`${setting}: ${entry} is not an address or CIDR`);
    const type = family === 6 ? 'ipv6' : 'ipv4';
    if (bits === undefined) list.addAddress(addr, type);
    else list.addSubnet(addr, Number(bits), type);
  }
  return (address, hop) => {
    if (address === undefined || address === '') return hop === 0;
    const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)?.[1];
    const family = isIP(mapped ?? address);
    if (family === 0) return false;
    return list.check(mapped ?? address, family === 6 ? 'ipv6' : 'ipv4');
  };
}

/**
 * The client address of a connection from `peer` carrying `forwardedFor` (the X-Forwarded-For
 * value, comma-separated, the nearest proxy's entry last), by the rule above.
 * @returns an address as written in the header or by the socket; `peer` when nothing is trusted.
 */
export function clientAddress(peer: string, forwardedFor: string | undefined, trust: TrustFn): string {
  const chain = (forwardedFor ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '')
    .reverse();
  let client = peer;
  for (let hop = 0; hop < chain.length && trust(client, hop); hop++) client = chain[hop] as string;
  return client;
}
