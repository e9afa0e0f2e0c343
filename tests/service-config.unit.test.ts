/**
 * Each service loads only its own sections (services/<name>/config.ts): it reads the settings it
 * declares, stops on a typo under a prefix it owns, and ignores the settings of other services that
 * share one environment under `npm start`.
 */
import { describe, expect, it } from 'vitest';
import { loadApiConfig } from '../services/api/config.ts';
import { loadEdgeConfig } from '../services/edge/config.ts';
import { loadGatewayConfig } from '../services/gateway/config.ts';
import { loadEngineConfig } from '../services/round-engine/config.ts';
import { loadSettlementConfig } from '../services/settlement/config.ts';

const shared = { BOTS_PLAYERS: '6', SANDBOX_PORT: '8090', WT_PORT: '4433', PROJECTOR_PORT: '8082' };

describe('per-service configuration', () => {
  it('gives each service its sections and no others', () => {
    const edge = loadEdgeConfig({ ...shared, GRPC_PORT: '50052', EDGE_WS_PORT: '9000' });
    expect(edge.grpc.port).toBe(50052);
    expect(edge.edge.wsPort).toBe(9000);
    expect(Object.keys(edge).sort()).toEqual([
      'auth',
      'db',
      'edge',
      'failureBudget', // the API's failed-credential budget (lib/auth/failure-budget.ts)
      'grpc',
      'kafka',
      'process',
      'stream',
    ]);
    // The API's other RATE_LIMIT_ settings, in a shared environment, are not the edge's typos.
    expect(loadEdgeConfig({ RATE_LIMIT_MAX: '5', RATE_LIMIT_AUTH_FAILURES: '9' }).failureBudget.max).toBe(9);
    const engine = loadEngineConfig({ ...shared, ROUND_SPEED: '20' });
    expect(engine.engine.speed).toBe(20);
    expect(Object.keys(engine).sort()).toEqual(['auth', 'engine', 'kafka', 'ops', 'process']); // auth: the signed internal cash-out
  });

  it.each([
    ['edge', () => loadEdgeConfig({ EDGE_WS_IDLE_TIMOUT_S: '30' }), /EDGE_WS_IDLE_TIMOUT_S: unknown setting/],
    ['edge', () => loadEdgeConfig({ GRPC_PORT: '70000' }), /GRPC_PORT/],
    ['round engine', () => loadEngineConfig({ ROUND_SPEEDD: '2' }), /ROUND_SPEEDD/],
    ['settlement', () => loadSettlementConfig({ SETTLEMENT_GRUOP: 'x' }), /SETTLEMENT_GRUOP/],
    ['api', () => loadApiConfig({ RATE_LIMIT_MAXX: '5' }), /RATE_LIMIT_MAXX/],
    ['gateway', () => loadGatewayConfig({ GATEWAY_API_URL: 'http://x:1/api' }), /GATEWAY_API_URL/],
  ])('the %s stops on a bad or unknown setting of its own, naming it', (_name, load, message) => {
    expect(load).toThrow(message);
  });

  it('leaves alone what libraries read from the environment (grpc-js GRPC_*, kafkajs KAFKAJS_*)', () => {
    const env = {
      GRPC_VERBOSITY: 'DEBUG',
      GRPC_DEFAULT_SSL_ROOTS_FILE_PATH: '/x',
      KAFKAJS_NO_PARTITIONER_WARNING: '1',
    };
    expect(loadEdgeConfig(env).grpc.port).toBe(50051);
  });

  it('the gateway derives its upstreams from the other services’ listener settings', () => {
    const g = loadGatewayConfig({ API_PORT: '9085', EDGE_HOST: '0.0.0.0' });
    expect(g.gateway.upstreams.api).toBe('http://127.0.0.1:9085');
    expect(g.gateway.upstreams.edgeHttp).toBe('http://127.0.0.1:8086');
  });
});
