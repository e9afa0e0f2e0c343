import { describe, expect, it } from 'vitest';
import { ConfigError } from '../lib/errors.ts';
import { loadConfig } from './support/config.ts';

describe('loadConfig', () => {
  it('gives the documented defaults for an empty environment', () => {
    const c = loadConfig({});
    expect(c.kafka.brokers).toEqual(['127.0.0.1:19092']);
    expect(c.api.rateLimitMax).toBe(100);
    expect(c.api.rateLimitWindowMs).toBe(60_000);
    expect(c.engine.games).toEqual(['crash', 'double', 'slot', 'wall-street']);
    expect(Object.isFrozen(c.kafka)).toBe(true);
  });

  it('reads settings and splits lists', () => {
    const c = loadConfig({ KAFKA_BROKERS: 'a:1, b:2', ROUND_GAMES: 'crash,slot', API_PORT: '9000' });
    expect(c.kafka.brokers).toEqual(['a:1', 'b:2']);
    expect(c.engine.games).toEqual(['crash', 'slot']);
    expect(c.api.port).toBe(9000);
  });

  it('gives each game one writer: the engine runs every game not in GAMES_EXTERNAL, and refuses to run one of them', () => {
    const c = loadConfig({ GAMES_EXTERNAL: 'slot,wall-street' });
    expect(c.engine.games).toEqual(['crash', 'double']);
    expect(c.games.external).toEqual(['slot', 'wall-street']);
    expect(c.games.skewMs).toBe(5000);
    expect(() => loadConfig({ GAMES_EXTERNAL: 'slot', ROUND_GAMES: 'crash,slot' })).toThrow(
      /ROUND_GAMES: slot published by an external game server/,
    );
    expect(() => loadConfig({ GAMES_EXTERNAL: 'slot,slot' })).toThrow(/GAMES_EXTERNAL/);
    expect(() => loadConfig({ GAMES_EXTERNAL: 'crash,double,slot,wall-street' })).toThrow(/nothing to run/);
  });

  it.each([
    ['GAMES_EXTERNAL', 'poker', /GAMES_EXTERNAL/],
    ['API_PORT', 'eighty', /API_PORT/],
    ['API_PORT', '70000', /API_PORT/],
    ['KAFKA_BROKERS', 'nohostport', /KAFKA_BROKERS/],
    ['ROUND_GAMES', 'crash,poker', /ROUND_GAMES/],
    ['ROUND_SERVER_SEED', 'xyz', /ROUND_SERVER_SEED/],
    ['DATABASE_SCHEMA', 'Bad-Name', /DATABASE_SCHEMA/],
    ['LOG_LEVEL', 'loud', /LOG_LEVEL/],
  ])('stops on malformed %s=%s naming the setting', (key, value, pattern) => {
    expect(() => loadConfig({ [key]: value })).toThrow(ConfigError);
    expect(() => loadConfig({ [key]: value })).toThrow(pattern);
  });

  it('lets overrides win over the environment', () => {
    expect(loadConfig({ API_PORT: '1' }, { API_PORT: 2 }).api.port).toBe(2);
  });
});

describe('loadConfig: WebTransport edge and gateway settings', () => {
  it('derives the gateway upstreams from the listeners, reading a wildcard host as loopback', () => {
    const c = loadConfig({ API_HOST: '0.0.0.0', API_PORT: '8085', EDGE_HOST: '::', WT_HTTP_PORT: '9088' });
    expect(c.gateway.port).toBe(8080);
    expect(c.gateway.upstreams).toEqual({
      api: 'http://127.0.0.1:8085',
      apiSocket: c.api.socket,
      edgeHttp: 'http://127.0.0.1:8086',
      edgeWs: 'http://127.0.0.1:8087',
      wtHttp: 'http://127.0.0.1:9088',
    });
    expect(c.api.socket).toMatch(/\.data\/api\/proxy\.sock$/);
  });

  it('takes explicit upstream URLs, without a trailing slash', () => {
    const c = loadConfig({ GATEWAY_API_URL: 'http://10.0.0.5:7000/', GATEWAY_EDGE_WS_URL: 'http://[::1]:1' });
    expect(c.gateway.upstreams.api).toBe('http://10.0.0.5:7000');
    expect(c.gateway.upstreams.edgeWs).toBe('http://[::1]:1');
    // An explicit API URL means TCP, unless the socket is named too.
    expect(c.gateway.upstreams.apiSocket).toBe('');
    expect(
      loadConfig({ GATEWAY_API_URL: 'http://a:1', GATEWAY_API_SOCKET: '/run/a.sock' }).gateway.upstreams
        .apiSocket,
    ).toBe('/run/a.sock');
    expect(loadConfig({ API_SOCKET: 'none' }).gateway.upstreams.apiSocket).toBe('');
  });

  it.each([
    ['GATEWAY_API_URL', 'ftp://x:1'],
    ['GATEWAY_API_URL', 'http://x:1/api'],
    ['GATEWAY_WT_HTTP_URL', 'localhost:8088'],
    ['WT_PORT', '-1'],
    ['WT_MAX_SESSIONS', '0'],
  ])('stops on malformed %s=%s naming the setting', (key, value) => {
    expect(() => loadConfig({ [key]: value })).toThrow(new RegExp(key));
  });

  it('uses the development certificate unless both WT_CERT_FILE and WT_KEY_FILE are set', () => {
    const dev = loadConfig({});
    expect(dev.wt).toMatchObject({ port: 4433, httpPort: 8088, certFile: null, keyFile: null });
    expect(dev.wt.devCertDir).toMatch(/\.data\/webtransport$/);
    const prod = loadConfig({ WT_CERT_FILE: '/etc/wt/cert.pem', WT_KEY_FILE: '/etc/wt/key.pem' });
    expect(prod.wt.certFile).toBe('/etc/wt/cert.pem');
    expect(() => loadConfig({ WT_CERT_FILE: '/etc/wt/cert.pem' })).toThrow(/WT_CERT_FILE \/ WT_KEY_FILE/);
  });
});

describe('loadConfig: edge (WebSocket, SSE) settings', () => {
  it('gives the documented defaults', () => {
    expect(loadConfig({}).edge).toEqual({
      host: '127.0.0.1',
      httpPort: 8086,
      wsPort: 8087,
      wsThreads: 1,
      wsMaxBufferBytes: 1 << 20,
      wsIdleTimeoutS: 120,
      sseMaxBufferBytes: 1 << 20,
      sseHeartbeatMs: 15_000,
      drainMs: 5_000,
      trustProxy: ['127.0.0.1', '::1'],
    });
  });

  it('reads EDGE_TRUST_PROXY as a list, none as no proxy', () => {
    expect(loadConfig({ EDGE_TRUST_PROXY: '10.0.0.0/8, 192.0.2.7' }).edge.trustProxy).toEqual([
      '10.0.0.0/8',
      '192.0.2.7',
    ]);
    expect(loadConfig({ EDGE_TRUST_PROXY: 'none' }).edge.trustProxy).toEqual([]);
  });

  it('gives the edges the API failed-credential budget settings, by the same names', () => {
    const c = loadConfig({ RATE_LIMIT_AUTH_FAILURES: '7', RATE_LIMIT_WINDOW_MS: '5000' });
    expect(c.failureBudget).toEqual({ max: 7, windowMs: 5000, redisUrl: '' });
    expect([c.api.authFailuresMax, c.api.rateLimitWindowMs]).toEqual([7, 5000]);
  });

  it('names an out-of-range setting', () => {
    expect(() => loadConfig({ EDGE_WS_IDLE_TIMEOUT_S: '4' })).toThrow(/EDGE_WS_IDLE_TIMEOUT_S/);
    expect(() => loadConfig({ EDGE_SSE_MAX_BUFFER_BYTES: '10' })).toThrow(/EDGE_SSE_MAX_BUFFER_BYTES/);
    expect(() => loadConfig({ EDGE_DRAIN_MS: '-1' })).toThrow(/EDGE_DRAIN_MS/);
    expect(() => loadConfig({ EDGE_WS_THREADS: '0' })).toThrow(/EDGE_WS_THREADS/);
    expect(() => loadConfig({ EDGE_WS_THREADS: 'two' })).toThrow(/EDGE_WS_THREADS/);
    expect(loadConfig({ EDGE_WS_THREADS: '2' }).edge.wsThreads).toBe(2);
  });
});

describe('loadConfig: access-control settings', () => {
  it('defaults to the seed switches (only gRPC required) and a file-kept token secret', () => {
    const c = loadConfig({});
    expect(c.auth).toMatchObject({
      requireApi: false,
      requireWs: false,
      requireSse: false,
      requireGrpc: true,
    });
    expect(c.auth.tokenSecret).toBe('');
    expect(c.auth.tokenSecretFile).toMatch(/\.data\/auth\/token-secret$/);
    expect(c.auth.batchMs).toBe(5000);
  });

  it('reads true/false/1/0 switches', () => {
    const c = loadConfig({ AUTH_REQUIRE_API: 'true', AUTH_REQUIRE_GRPC: '0' });
    expect(c.auth.requireApi).toBe(true);
    expect(c.auth.requireGrpc).toBe(false);
  });

  it.each([
    ['AUTH_REQUIRE_API', 'yes'],
    ['AUTH_TOKEN_SECRET', 'ab'],
    ['AUTH_ADMIN_KEY', `pk_live_${'a'.repeat(64)}`],
    ['AUTH_ADMIN_KEY', `sk_live_${'a'.repeat(63)}`],
  ])('stops on malformed %s=%s', (key, value) => {
    expect(() => loadConfig({ [key]: value })).toThrow(new RegExp(key));
  });
});
