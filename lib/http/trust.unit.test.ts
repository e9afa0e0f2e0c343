import { describe, expect, it } from 'vitest';
import { clientAddress, proxyTrust } from './trust.ts';

describe('clientAddress (proxy-addr walk over X-Forwarded-For)', () => {
  const loopback = proxyTrust(['127.0.0.1', '::1'], 'EDGE_TRUST_PROXY');

  it('a trusted peer hands over to the entry it appended (the rightmost)', () => {
    expect(clientAddress('127.0.0.1', '198.51.100.9', loopback)).toBe('198.51.100.9');
    expect(clientAddress('::ffff:127.0.0.1', '10.0.0.1, 198.51.100.9', loopback)).toBe('198.51.100.9');
  });

  it('entries left of the first untrusted address are the client’s own claims, ignored', () => {
    expect(clientAddress('127.0.0.1', '203.0.113.1, 198.51.100.9', loopback)).toBe('198.51.100.9');
  });

  it('an untrusted peer is the client whatever it sends', () => {
    expect(clientAddress('192.0.2.4', '127.0.0.1', loopback)).toBe('192.0.2.4');
    expect(clientAddress('127.0.0.1', undefined, loopback)).toBe('127.0.0.1');
    expect(clientAddress('127.0.0.1', ' , ', loopback)).toBe('127.0.0.1');
  });

  it('none trusted (EDGE_TRUST_PROXY=none): always the peer', () => {
    expect(clientAddress('127.0.0.1', '198.51.100.9', proxyTrust([]))).toBe('127.0.0.1');
  });

  it('names the setting of a malformed entry', () => {
    expect(() => proxyTrust(['10.0.0.0/8', 'gateway'], 'EDGE_TRUST_PROXY')).toThrow(
      'EDGE_TRUST_PROXY: gateway is not an address or CIDR',
    );
  });
});
