/**
 * The ops artefacts cannot drift from the code: the Grafana dashboard parses, uses the Prometheus
 * datasource variable everywhere, and queries only metrics that some service registers (collected
 * from each service's metrics module, built in-process without any I/O); it covers the figures the
 * ops issue asks for; the Prometheus scrape example names every service at its default port.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import Fastify from 'fastify';
import { Kafka } from 'kafkajs';
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { observeHttpRequests } from '../lib/http/metrics.ts';
import { trackConsumerLag } from '../lib/log/consumer-lag.ts';
import { createConsumerMetrics as createProjectorMetrics } from '../lib/log/consumer-metrics.ts';
import { createLogger } from '../lib/logger.ts';
import { createServiceRegistry, SERVICES, type ServiceName } from '../lib/metrics.ts';
import { createEdgeMetrics } from '../lib/stream/metrics.ts';
import { registerMetrics } from '../services/api/metrics/metrics.ts';
import { buildBots } from '../services/bots/bots.ts';
import { createWtMetrics } from '../services/edge-webtransport/metrics.ts';
import { createGatewayMetrics } from '../services/gateway/ops.ts';
import { createMetrics as createSandboxMetrics } from '../services/operator-sandbox/metrics.ts';
import { createMetrics as createEngineMetrics } from '../services/round-engine/metrics.ts';
import { createSettlementMetrics } from '../services/settlement/metrics.ts';
import { createSagaMetrics } from '../services/wallet-saga/metrics.ts';
import { loadConfig } from '../tests/support/config.ts';

const HERE = import.meta.dirname;
const logger = createLogger('dashboard-test', 'silent');
const dashboard = JSON.parse(readFileSync(resolve(HERE, 'grafana', 'casino-platform.json'), 'utf8'));

/** The panels' datasource: the dashboard variable, so an import asks which Prometheus to use. */
const DATASOURCE_UID = ['$', '{datasource}'].join('');
/** Series Prometheus makes itself for every target, not registered by any service. */
const PROMETHEUS_SERIES = new Set(['up']);

/**
 * Names of the metrics in `registry` with the series names Prometheus derives from them
 * (`_bucket`, `_sum`, `_count` of histograms and summaries).
 */
function seriesNames(registry: Registry): string[] {
  const out: string[] = [];
  for (const m of registry.getMetricsAsArray()) {
    // prom-client's typings declare a numeric enum; at run time `type` is the string name.
    const type = String(m.type);
    out.push(m.name);
    if (type === 'histogram') out.push(`${m.name}_bucket`, `${m.name}_sum`, `${m.name}_count`);
    if (type === 'summary') out.push(`${m.name}_sum`, `${m.name}_count`);
  }
  return out;
}

/** Every series name the services' registries expose. */
async function registeredSeries(): Promise<Set<string>> {
  const registries: Registry[] = [];
  registries.push(createEngineMetrics().registry, createProjectorMetrics().registry);
  const api = Fastify();
  registerMetrics(api);
  registries.push(api.metricsRegistry, createEdgeMetrics().register, createWtMetrics().register);
  const gateway = createGatewayMetrics(() => 0);
  observeHttpRequests(Fastify(), gateway.registry);
  const settlement = createServiceRegistry('settlement');
  createSettlementMetrics(settlement);
  const sandbox = createSandboxMetrics();
  observeHttpRequests(Fastify(), sandbox.register);
  const bots = buildBots({ config: loadConfig({}, {}), logger });
  registries.push(
    gateway.registry,
    settlement,
    createSagaMetrics().registry,
    sandbox.register,
    bots.registry,
  );
  // kafka_consumer_lag comes with every consumer's tracker; one that is never started does no I/O.
  const lag = new Registry();
  const tracker = trackConsumerLag({
    kafka: new Kafka({ brokers: ['127.0.0.1:1'] }),
    registry: lag,
    name: 'test',
    groupId: 'test',
    topics: [],
    refreshMs: 60_000,
    logger,
  });
  registries.push(lag);
  const names = new Set(registries.flatMap(seriesNames));
  await tracker.stop();
  return names;
}

interface Target {
  readonly panel: string;
  readonly expr: string;
}

function targets(): Target[] {
  const out: Target[] = [];
  const walk = (panels: Array<Record<string, unknown>>) => {
    for (const p of panels) {
      for (const t of (p.targets as Array<{ expr: string }> | undefined) ?? [])
        out.push({ panel: String(p.title), expr: t.expr });
      walk((p.panels as Array<Record<string, unknown>> | undefined) ?? []);
    }
  };
  walk(dashboard.panels);
  return out;
}

const KEYWORDS = new Set([
  'by',
  'without',
  'on',
  'ignoring',
  'group_left',
  'group_right',
  'bool',
  'offset',
  'and',
  'or',
  'unless',
]);

/**
 * Metric names a PromQL expression selects: identifiers that are not functions, aggregation
 * keywords, label names (inside `{…}` or `by (…)`), durations or Grafana variables.
 */
function metricNames(expr: string): string[] {
  const bare = expr
    .replace(/"(?:[^"\\]|\\.)*"/g, '""') // label values and strings
    .replace(/\{[^}]*\}/g, ' ') // label matchers
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ') // grouping labels
    .replace(/\[[^\]]*\]/g, ' ') // range durations
    .replace(/\$\{?\w+\}?/g, ' '); // Grafana variables
  const names: string[] = [];
  for (const m of bare.matchAll(/[a-zA-Z_:][a-zA-Z0-9_:]*/g)) {
    const after = bare.slice((m.index ?? 0) + m[0].length).trimStart();
    if (after.startsWith('(') || KEYWORDS.has(m[0])) continue;
    names.push(m[0]);
  }
  return names;
}

describe('Grafana dashboard (ops/grafana/casino-platform.json)', () => {
  it('extracts metric names from PromQL', () => {
    expect(
      metricNames(
        'histogram_quantile(0.95, sum by (le, service) (rate(http_request_duration_seconds_bucket{service=~"$service", route!~"/sse/.*"}[$__rate_interval])))',
      ),
    ).toEqual(['http_request_duration_seconds_bucket']);
    expect(metricNames('sum by (projection) (rate(a_total[5m])) / sum(b_count)')).toEqual([
      'a_total',
      'b_count',
    ]);
  });

  it('uses the Prometheus datasource variable in every panel and query', () => {
    const variable = dashboard.templating.list.find((v: { name: string }) => v.name === 'datasource');
    expect(variable).toMatchObject({ type: 'datasource', query: 'prometheus' });
    const panels = (dashboard.panels as Array<Record<string, unknown>>).filter((p) => p.type !== 'row');
    expect(panels.length).toBeGreaterThan(20);
    for (const p of panels) {
      expect(p.datasource, String(p.title)).toEqual({ type: 'prometheus', uid: DATASOURCE_UID });
      const ts = p.targets as Array<{ expr: string; refId: string }>;
      expect(ts.length, String(p.title)).toBeGreaterThan(0);
      for (const t of ts) expect(t.expr.trim().length, String(p.title)).toBeGreaterThan(0);
    }
    const ids = panels.map((p) => p.id);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('queries only metrics some service registers, with service labels that exist', async () => {
    const registered = await registeredSeries();
    const unknown: string[] = [];
    for (const t of targets()) {
      for (const name of metricNames(t.expr))
        if (!registered.has(name) && !PROMETHEUS_SERIES.has(name)) unknown.push(`${t.panel}: ${name}`);
      for (const m of t.expr.matchAll(/service="([^"]+)"/g))
        expect(SERVICES as readonly string[], t.panel).toContain(m[1]);
    }
    expect(unknown).toEqual([]);
  });

  it('has panels for lag, fan-out, slow closes, projector batches, callbacks, HTTP and memory', () => {
    const queried = new Set(targets().flatMap((t) => metricNames(t.expr)));
    for (const name of [
      'kafka_consumer_lag',
      'edge_subscribers',
      'edge_deliveries_total',
      'edge_slow_subscriber_closes_total',
      'projector_batch_size_bucket',
      'wallet_saga_callback_attempts_total',
      'wallet_saga_retries_total',
      'wallet_saga_parked_total',
      'http_request_duration_seconds_count',
      'http_request_duration_seconds_bucket',
      'process_resident_memory_bytes',
    ])
      expect([...queried], name).toContain(name);
  });
});

describe('Prometheus scrape example (ops/prometheus.yml)', () => {
  it('has one job per service, at the port its /metrics listens on by default', () => {
    const doc = parse(readFileSync(resolve(HERE, 'prometheus.yml'), 'utf8')) as {
      scrape_configs: Array<{ job_name: string; static_configs: Array<{ targets: string[] }> }>;
    };
    const c = loadConfig({}, {});
    const ports: Record<ServiceName, number> = {
      'round-engine': c.engine.port,
      projector: c.projector.port,
      api: c.api.port,
      edge: c.edge.httpPort,
      'edge-webtransport': c.wt.httpPort,
      gateway: c.gateway.opsPort,
      'operator-sandbox': c.sandbox.port,
      'wallet-saga': c.walletSaga.httpPort,
      settlement: c.settlement.httpPort,
      bots: c.bots.httpPort,
    };
    const jobs = Object.fromEntries(
      doc.scrape_configs.map((j) => [j.job_name, j.static_configs[0]?.targets]),
    );
    expect(Object.keys(jobs).sort()).toEqual([...SERVICES].sort());
    for (const s of SERVICES) expect(jobs[s], s).toEqual([`127.0.0.1:${ports[s]}`]);
  });
});
