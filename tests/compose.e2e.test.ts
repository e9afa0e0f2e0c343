/**
 * docker-compose.yml stays in step with the deployables: every `services/<name>/main.ts` and the
 * projector (`services/projector/main.ts`) must have a compose service of that name running its
 * compiled entry from the image's production build (`dist/services/<name>/main.js`, never tsx),
 * wired to the broker, the database and the one-shot `init`.
 *
 * The file is read through `docker compose config --format json` (Compose v2, which also validates
 * it against the Compose specification and needs no running engine); where only Compose v1
 * (`docker-compose`) is installed its normalised YAML is used; with neither, the YAML is parsed
 * directly, so the deployable check still runs on machines without Docker tooling.
 */
import { spawnSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { BlockList } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';

const ROOT = resolve(import.meta.dirname, '..');
const COMPOSE_FILE = join(ROOT, 'docker-compose.yml');

interface ComposeService {
  command?: string | string[] | null;
  build?: unknown;
  image?: string;
  restart?: string;
  healthcheck?: { test?: string | string[] };
  environment?: Record<string, string | number | null> | string[];
  depends_on?: Record<string, { condition?: string }> | string[];
  networks?: Record<string, { ipv4_address?: string } | null> | string[];
}
interface ComposeNetwork {
  ipam?: { config?: { subnet?: string; ip_range?: string }[] };
}
interface ComposeModel {
  source: string;
  services: Record<string, ComposeService>;
  networks: Record<string, ComposeNetwork | null>;
}

/** Compose service name → compiled entry file (scripts/build.sh output), for every deployable under `root`. */
function deployables(root: string): Map<string, string> {
  const out = new Map<string, string>();
  const servicesDir = join(root, 'services');
  for (const entry of readdirSync(servicesDir, { withFileTypes: true })) {
    if (entry.isDirectory() && existsSync(join(servicesDir, entry.name, 'main.ts'))) {
      out.set(entry.name, `dist/services/${entry.name}/main.js`);
    }
  }
  out.set('projector', 'dist/services/projector/main.js');
  return out;
}

/** A compose service's command as one string. */
function commandOf(svc: ComposeService | undefined): string {
  return Array.isArray(svc?.command) ? svc.command.join(' ') : (svc?.command ?? '');
}

/** Whether IPv4 `address` lies in `cidr` (`a.b.c.d/n`). */
function inCidr(address: string, cidr: string): boolean {
  const [net, bits] = cidr.split('/');
  const list = new BlockList();
  list.addSubnet(net as string, Number(bits), 'ipv4');
  return list.check(address, 'ipv4');
}

/** Deployables of `root` with no compose service, or whose service does not run their compiled entry. */
function missingFromCompose(root: string, services: Record<string, ComposeService>): string[] {
  const missing: string[] = [];
  for (const [name, entry] of deployables(root)) {
    const svc = services[name];
    if (!svc || !commandOf(svc).includes(entry)) missing.push(`${name} (${entry})`);
  }
  return missing;
}

function run(cmd: string, args: string[]): { ok: boolean; stdout: string; stderr: string } {
  const r = spawnSync(cmd, args, { cwd: ROOT, encoding: 'utf8', timeout: 60_000 });
  return { ok: r.status === 0, stdout: r.stdout ?? '', stderr: r.stderr ?? '' };
}

function loadCompose(): ComposeModel {
  if (run('docker', ['compose', 'version']).ok) {
    const r = run('docker', ['compose', '-f', COMPOSE_FILE, 'config', '--format', 'json']);
    if (!r.ok) throw new Error(`docker compose config failed:\n${r.stderr}`);
    const doc = JSON.parse(r.stdout);
    return { source: 'docker compose config', services: doc.services, networks: doc.networks ?? {} };
  }
  if (run('docker-compose', ['version']).ok) {
    const r = run('docker-compose', ['-f', COMPOSE_FILE, 'config']);
    if (!r.ok) throw new Error(`docker-compose config failed:\n${r.stderr}`);
    const doc = parse(r.stdout, { merge: true });
    return { source: 'docker-compose config (v1)', services: doc.services, networks: doc.networks ?? {} };
  }
  const doc = parse(readFileSync(COMPOSE_FILE, 'utf8'), { merge: true });
  return {
    source: 'YAML parse (no Compose installed)',
    services: doc.services,
    networks: doc.networks ?? {},
  };
}

function envOf(svc: ComposeService): Record<string, string> {
  const env = svc.environment ?? {};
  if (Array.isArray(env)) return Object.fromEntries(env.map((kv) => kv.split(/=(.*)/s).slice(0, 2)));
  return Object.fromEntries(Object.entries(env).map(([k, v]) => [k, String(v ?? '')]));
}

function conditionOn(svc: ComposeService, dep: string): string | undefined {
  const deps = svc.depends_on;
  if (!deps || Array.isArray(deps)) return undefined;
  return deps[dep]?.condition;
}

describe('docker-compose.yml', () => {
  const model = loadCompose();

  it(`parses (${model.source}) and has the broker, database and init services`, () => {
    expect(Object.keys(model.services)).toEqual(expect.arrayContaining(['redpanda', 'postgres', 'init']));
    const redpanda = JSON.stringify(model.services.redpanda?.command);
    expect(redpanda).toContain('--schema-registry-addr');
    expect(model.services.postgres?.image).toMatch(/^postgres:15/);
  });

  it('has a service running each services/<name>/main.ts and the projector, compiled', () => {
    expect(deployables(ROOT).size).toBeGreaterThanOrEqual(1);
    expect(missingFromCompose(ROOT, model.services)).toEqual([]);
  });

  it('runs compiled JavaScript from the image, never TypeScript through tsx', () => {
    const built = Object.entries(model.services).filter(([, svc]) => svc.build);
    expect(built.length).toBeGreaterThanOrEqual(deployables(ROOT).size);
    for (const [name, svc] of built) {
      const command = commandOf(svc);
      expect(command, name).toContain('dist/');
      expect(command, name).not.toMatch(/\btsx\b|\.ts\b/);
    }
  });

  it('wires every deployable to redpanda, postgres and init, with a healthcheck', () => {
    for (const name of deployables(ROOT).keys()) {
      const svc = model.services[name];
      expect(svc, `compose service ${name}`).toBeDefined();
      if (!svc) continue;
      const env = envOf(svc);
      expect(env.KAFKA_BROKERS, name).toBe('redpanda:9092');
      expect(env.DATABASE_URL, name).toMatch(/@postgres:5432\/casino$/);
      expect(conditionOn(svc, 'init'), name).toBe('service_completed_successfully');
      expect(conditionOn(svc, 'redpanda'), name).toBe('service_healthy');
      expect(svc.healthcheck?.test, name).toBeTruthy();
      expect(svc.restart, name).toBe('unless-stopped');
      expect(svc.build, name).toBeTruthy();
    }
  });

  it('gives the proxy a fixed address in a declared subnet, the only peer every edge trusts (EDGE_TRUST_PROXY)', () => {
    const proxy = model.services.proxy;
    const attached = proxy?.networks && !Array.isArray(proxy.networks) ? Object.entries(proxy.networks) : [];
    const fixed = attached.filter(([, n]) => n?.ipv4_address);
    expect(
      fixed.map(([name]) => name),
      'the proxy has one fixed address',
    ).toHaveLength(1);
    const [network, attachment] = fixed[0] as [string, { ipv4_address: string }];
    const address = attachment.ipv4_address;
    const pools = model.networks[network]?.ipam?.config ?? [];
    expect(pools.length, `network ${network} declares its subnet`).toBeGreaterThan(0);
    expect(
      pools.some((p) => p.subnet && inCidr(address, p.subnet)),
      `${address} in a subnet of ${network}`,
    ).toBe(true);
    // Other containers draw dynamic addresses from ip_range: the proxy's must lie outside it, or a
    // container started first could take it.
    for (const p of pools) {
      expect(p.ip_range, `${network} ${p.subnet}: ip_range`).toBeTruthy();
      expect(inCidr(address, p.ip_range as string), `${address} outside ${p.ip_range}`).toBe(false);
    }
    // nginx connects to the edges from that address (proxy_bind/grpc_bind ${PROXY_ADDRESS}).
    expect(envOf(proxy as ComposeService).PROXY_ADDRESS).toBe(address);
    const edges = Object.entries(model.services).filter(([, svc]) =>
      commandOf(svc).includes('dist/services/edge/main.js'),
    );
    expect(edges.map(([name]) => name).sort()).toEqual(['edge', 'edge-b']);
    // Besides the proxy, only loopback (the edge's own gRPC proxy): no other container, no subnet.
    const loopback = ['127.0.0.1', '::1'];
    for (const [name, svc] of edges) {
      const trusted = (envOf(svc).EDGE_TRUST_PROXY ?? '').split(',').map((a) => a.trim());
      expect(
        trusted.filter((a) => !loopback.includes(a)),
        name,
      ).toEqual([address]);
    }
  });

  it('counts failed credentials in one Redis for the API and every edge (RATE_LIMIT_REDIS_URL)', () => {
    // Without it each replica counts for itself: two edges would allow twice the budget.
    const counting = ['api', 'edge', 'edge-b', 'edge-webtransport'];
    for (const name of counting) {
      const svc = model.services[name] as ComposeService;
      expect(envOf(svc).RATE_LIMIT_REDIS_URL, name).toBe('redis://redis:6379');
      const deps = svc.depends_on as Record<string, { condition?: string }> | undefined;
      expect(deps?.redis?.condition, `${name} waits for redis`).toBe('service_healthy');
    }
  });

  it('runs topic creation and migrations in the one-shot init service', () => {
    const command = JSON.stringify(model.services.init?.command);
    expect(command).toContain('dist/scripts/create-topics.js');
    expect(command).toContain('dist/scripts/migrate.js');
  });

  it('reports a services/<name>/main.ts that has no compose service', () => {
    const root = mkdtempSync(join(tmpdir(), 'compose-check-'));
    try {
      mkdirSync(join(root, 'services', 'ghost'), { recursive: true });
      writeFileSync(join(root, 'services', 'ghost', 'main.ts'), '');
      mkdirSync(join(root, 'services', 'notes-only'), { recursive: true });
      expect(missingFromCompose(root, model.services)).toEqual(['ghost (dist/services/ghost/main.js)']);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
