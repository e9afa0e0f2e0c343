/**
 * Whose X-Forwarded-For the API believes (issue 13 item 3): the peer of a request that came in on
 * the proxy's Unix socket (API_SOCKET; who may connect is decided by the file's permissions, so a
 * client on the same host cannot pass itself off as the gateway by connecting to the TCP port),
 * and TCP peers listed in API_TRUST_PROXY (none by default). A fastify `trustProxy` function:
 * proxy-addr calls it per hop, the socket's peer first (hop 0, no address on a Unix socket), then
 * each X-Forwarded-For entry from the right; the first untrusted one is `request.ip`.
 */
import { BlockList, isIP } from 'node:net';

/** The trust function for fastify's `trustProxy` option. @throws Error naming a malformed address or CIDR. */
export function proxyTrust(
  trusted: readonly string[],
): (address: string | undefined, hop: number) => boolean {
  const list = new BlockList();
  for (const entry of trusted) {
    const [addr = '', bits] = entry.split('/');
    const family = isIP(addr);
    if (family === 0) throw new Error(`API_TRUST_PROXY: ${entry} is not an address or CIDR`);
    const type = family === 6 ? 'ipv6' : 'ipv4';
    if (bits === undefined) list.addAddress(addr, type);
    else list.addSubnet(addr, Number(bits), type);
  }
  return (address, hop) => {
    // A Unix-socket peer has no address: the proxy that owns the socket, trusted as the first hop only.
    if (address === undefined || address === '') return hop === 0;
    const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)?.[1];
    const family = isIP(mapped ?? address);
    if (family === 0) return false;
    return list.check(mapped ?? address, family === 6 ? 'ipv6' : 'ipv4');
  };
}
