/**
 * The edges' subscribers as read from Prometheus text (every protocol label the edges use, threads
 * summed), and OPS_EDGE_URLS in the API's configuration: its default from the edges' own listener
 * settings, and a malformed or misspelt setting refused by name.
 */
import { describe, expect, it } from 'vitest';
import { loadApiConfig } from '../config.ts';
import { subscribersOf } from './edges.ts';

describe('subscribersOf', () => {
  it('sums edge_subscribers per protocol, gRPC-Web proxy counted as gRPC, threads summed', () => {
    const text = [
      '# HELP edge_subscribers Open stream subscriptions, by protocol.',
      '# TYPE edge_subscribers gauge',
      'edge_subscribers{protocol="ws",service="edge"} 3',
      'edge_subscribers{protocol="ws",thread="1",service="edge"} 2',
      'edge_subscribers{service="edge",protocol="sse"} 4',
      'edge_subscribers{protocol="grpc"} 1',
      'edge_subscribers{protocol="grpc-proxy"} 5',
      'edge_subscribers{protocol="webtransport"} 7 1700000000000',
      'edge_subscribers_other{protocol="ws"} 100',
      'edge_deliveries_total{protocol="ws"} 99',
    ].join('\n');
    expect(subscribersOf(text)).toEqual({ websocket: 5, sse: 4, grpc: 6, webtransport: 7 });
    expect(subscribersOf('')).toEqual({ websocket: 0, sse: 0, grpc: 0, webtransport: 0 });
  });
});

describe('OPS_EDGE_URLS', () => {
  it('defaults to the local edge and WebTransport edge from their own settings', () => {
    expect(loadApiConfig({}).opsConsole.edgeUrls).toEqual(['http://127.0.0.1:8086', 'http://127.0.0.1:8088']);
    const c = loadApiConfig({ EDGE_HTTP_PORT: '9086', WT_HOST: '0.0.0.0', WT_HTTP_PORT: '9088' });
    expect(c.opsConsole.edgeUrls).toEqual(['http://127.0.0.1:9086', 'http://127.0.0.1:9088']);
  });

  it('takes a comma-separated list of origins, trailing slashes dropped', () => {
    const c = loadApiConfig({ OPS_EDGE_URLS: 'http://edge-1:8086/, https://edge-2:8443' });
    expect(c.opsConsole.edgeUrls).toEqual(['http://edge-1:8086', 'https://edge-2:8443']);
  });

  it.each([
    ['not a URL', { OPS_EDGE_URLS: 'edge-1:8086' }, /OPS_EDGE_URLS/],
    ['a path', { OPS_EDGE_URLS: 'http://edge-1:8086/metrics' }, /OPS_EDGE_URLS/],
    ['a typo', { OPS_EDGE_URL: 'http://edge-1:8086' }, /OPS_EDGE_URL: unknown setting/],
    ['timeout', { OPS_EDGE_TIMEOUT_MS: '5' }, /OPS_EDGE_TIMEOUT_MS/],
  ])('refuses %s, naming the setting', (_name, env, message) => {
    expect(() => loadApiConfig(env)).toThrow(message);
  });
});
