/**
 * The production build: `npm run build` compiles every entry point to JavaScript, and the
 * Dockerfile's final stage runs it with `node` on production dependencies only.
 *
 * With no container engine here, the image is reproduced in a temporary app folder: the build
 * output as dist/, package.json, and the node_modules of the stage the final stage copies them
 * from, made by running that stage's own npm commands. The compiled API (after the compiled
 * create-topics and migrate that compose's `init` runs) answers /health there, and the
 * WebTransport edge runs there under Deno with the flags of its compose command.
 *
 * The image's edge: its uWebSockets.js binary for Node 24 is the official one, untouched
 * (the stage installs with --ignore-scripts); the test reads the glibc versions that binary requires
 * and checks the base image's Debian release provides them, then starts the compiled edge from that
 * install with compose's command. Without a container engine the start happens on this host, whose
 * glibc may be older: then the host's own install step (scripts/uws-glibc.ts) is applied to the copy
 * first, as `npm install` does here. What this proves: the production install and compiled edge
 * start with the image's command, and the binary asks glibc for nothing Debian 13 lacks. What it does
 * not: that Debian 13's loader, libraries and Node image run it (no such image runs here).
 */
import { execFileSync } from 'node:child_process';
import {
  cpSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Kafka, logLevel } from 'kafkajs';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { compareGlibc, readGlibcNeeds, rebindForGlibc } from '../scripts/uws-glibc.ts';
import { cmdOf, copiesOf, parseDockerfile, runsOf, type Stage } from './support/dockerfile.ts';
import { waitFor } from './support/poll.ts';
import {
  DENO_BIN,
  devCertDir,
  freePort,
  ROOT,
  type Service,
  startProcess,
  statusOf,
  uniqueId,
} from './support/processes.ts';
import { attempt } from './support/stream-clients.ts';

const BROKERS = process.env.KAFKA_BROKERS ?? '127.0.0.1:19092';
const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://casino:casino@127.0.0.1:55432/casino';
const NPM_INSTALL = /\bnpm\s+(install|i|ci|add)\b/;

/** glibc of the Debian releases a base image may name (Debian 12 bookworm, 13 trixie). */
const DEBIAN_GLIBC: Record<string, string> = { bookworm: '2.36', trixie: '2.41' };
/** Node's module ABI per major version (process.versions.modules): the binary the image loads. */
const NODE_ABI: Record<string, string> = { '20': '115', '22': '127', '24': '137' };

const stages = parseDockerfile(readFileSync(join(ROOT, 'Dockerfile'), 'utf8'));
const final = stages.at(-1) as Stage;
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
  dependencies: Record<string, string>;
};
const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as {
  packages: Record<string, { dev?: boolean }>;
};

/** The stage the final stage copies node_modules from (exactly one COPY of them). */
function depsStage(): Stage {
  const copies = copiesOf(final).filter((c) =>
    [...c.sources, c.dest].some((p) => p.includes('node_modules')),
  );
  expect(copies, 'COPY instructions of node_modules in the final stage').toHaveLength(1);
  const stage = stages.find((s) => s.name === copies[0]?.from);
  if (!stage)
    throw new Error(`node_modules copied from ${copies[0]?.from ?? 'the build context'}, not a stage`);
  return stage;
}

/** Paths (`node_modules/a/node_modules/@s/b`) of every package installed under `dir`/node_modules. */
function installed(dir: string, prefix = 'node_modules'): string[] {
  const root = join(dir, prefix);
  if (!existsSync(root)) return [];
  const out: string[] = [];
  for (const e of readdirSync(root)) {
    if (e.startsWith('.')) continue;
    const names = e.startsWith('@') ? readdirSync(join(root, e)).map((s) => `${e}/${s}`) : [e];
    for (const name of names) {
      out.push(`${prefix}/${name}`);
      out.push(...installed(dir, `${prefix}/${name}/node_modules`));
    }
  }
  return out;
}

/**
 * Resolves once `url` answers 200. @throws with `svc`'s output when it exits first or after 60 s.
 * An edge's `/health` answers as soon as its HTTP listener is up; `/ready` once it has started
 * (key table loaded, token secret read or made, source caught up): wait on `/ready` before
 * checking anything start-up makes.
 */
async function healthy(svc: Service, url: string): Promise<void> {
  const state = await waitFor(`${url} to answer 200`, async () => {
    if (svc.child.exitCode !== null) return `exited with ${svc.child.exitCode}`;
    return (await statusOf(url)) === 200 ? 'up' : undefined;
  }).catch((err: unknown) => String(err));
  if (state !== 'up') throw new Error(`${state}\n${svc.output().slice(-3000)}`);
}

const work = mkdtempSync(join(tmpdir(), 'casino-build-'));
const app = join(work, 'app'); // /app of the image
const dist = join(app, 'dist');
const ns = `${uniqueId('build-')}-`;
const schema = uniqueId('build_');
const running: Service[] = [];

beforeAll(() => {
  mkdirSync(app);
  execFileSync('npm', ['run', 'build', '--', dist], { cwd: ROOT, stdio: 'pipe', timeout: 240_000 });
  // The production-dependencies stage, as it is written: its context files, then its npm commands.
  const deps = depsStage();
  for (const c of copiesOf(deps)) {
    expect(c.from, `${deps.name}: COPY from another stage`).toBeUndefined();
    // A source is a file or a folder (COPY patches ./patches/), copied whole either way.
    for (const src of c.sources) cpSync(join(ROOT, src), join(app, src), { recursive: true });
  }
  for (const run of runsOf(deps)) {
    expect(run, `${deps.name}: only npm commands are reproduced`).toMatch(/^npm\s/);
    execFileSync('sh', ['-c', run], { cwd: app, stdio: 'pipe', timeout: 240_000 });
  }
  mkdirSync(join(app, '.data'), { recursive: true }); // the Dockerfile's mkdir
}, 480_000);

afterAll(async () => {
  await Promise.all(running.map((s) => s.stop('SIGKILL')));
  const sql = postgres(DATABASE_URL, { max: 1, onnotice: () => {} });
  await sql.unsafe(`drop schema if exists "${schema}" cascade`).catch(() => {});
  await sql.end({ timeout: 2 });
  const admin = new Kafka({ brokers: BROKERS.split(','), logLevel: logLevel.NOTHING }).admin();
  await admin.connect();
  const topics = (await admin.listTopics()).filter((t) => t.startsWith(ns));
  if (topics.length > 0) await admin.deleteTopics({ topics, timeout: 10_000 }).catch(() => {});
  await admin.disconnect();
  rmSync(work, { recursive: true, force: true });
}, 60_000);

describe('production build', () => {
  it('compiles every entry point and copies the files they read at run time', () => {
    const entries = readdirSync(join(ROOT, 'services')).flatMap((s) =>
      ['main', 'cli']
        .filter((f) => existsSync(join(ROOT, 'services', s, `${f}.ts`)))
        .map((f) => `services/${s}/${f}`),
    );
    const scripts = readdirSync(join(ROOT, 'scripts'))
      .filter((f) => f.endsWith('.ts'))
      .map((f) => `scripts/${f.slice(0, -3)}`);
    expect(entries).toEqual(expect.arrayContaining(['services/api/main', 'services/edge-webtransport/main']));
    for (const e of [...entries, ...scripts]) expect(existsSync(join(dist, `${e}.js`)), e).toBe(true);
    for (const dir of [
      'lib/db/migrations',
      'services/operator-sandbox/migrations',
      'proto',
      'public',
      'schemas/callbacks',
    ]) {
      const files = readdirSync(join(ROOT, dir)).filter((f) => !f.endsWith('.ts'));
      expect(readdirSync(join(dist, dir)).sort(), dir).toEqual(files.sort());
    }
    expect(existsSync(join(dist, 'schemas/registry.json'))).toBe(true);
    expect(readdirSync(join(dist, 'schemas')).filter((f) => f.endsWith('.avsc')).length).toBeGreaterThan(0);
    // The browser console, where the compiled gateway looks for it (GATEWAY_CONSOLE_DIR's default).
    expect(readdirSync(join(dist, '.build/console')).sort()).toEqual(
      expect.arrayContaining(['console.css', 'console.js', 'index.html']),
    );
    expect(lstatSync(join(dist, '.data')).isSymbolicLink()).toBe(true);
    expect(readlinkSync(join(dist, '.data'))).toBe('../.data');
  });

  it("runs node on dist/ in the Dockerfile's final stage, its node_modules from a production-only install", () => {
    expect(
      stages.map((s) => s.name),
      'the final stage starts from the base image',
    ).not.toContain(final.base);
    expect(cmdOf(final)).toEqual(['node', 'dist/services/api/main.js']);
    expect(runsOf(final).filter((r) => NPM_INSTALL.test(r))).toEqual([]);
    expect(final.steps.map((s) => s.args).join('\n')).not.toMatch(/\btsx\b/);
    for (const c of copiesOf(final).filter((c) => c.from === undefined)) {
      expect(c.sources, 'the whole build context').not.toContain('.');
    }
    const installs = runsOf(depsStage()).filter((r) => NPM_INSTALL.test(r));
    expect(installs.length).toBeGreaterThan(0);
    for (const r of installs) expect(r).toMatch(/--omit=dev\b/);
    expect(readFileSync(join(ROOT, '.dockerignore'), 'utf8').split('\n')).toContain('node_modules');
  });

  it('that install holds every dependency and no package that only devDependencies need', () => {
    const have = installed(app);
    for (const name of Object.keys(pkg.dependencies)) expect(have, name).toContain(`node_modules/${name}`);
    const devOnly = Object.keys(lock.packages).filter((p) => lock.packages[p]?.dev);
    for (const tool of ['tsx', 'typescript', 'vitest', '@biomejs/biome', 'esbuild', 'deno']) {
      expect(devOnly, tool).toContain(`node_modules/${tool}`);
    }
    expect(
      have.filter((p) => !(p in lock.packages)),
      'installed but not in the lock',
    ).toEqual([]);
    expect(have.filter((p) => lock.packages[p]?.dev)).toEqual([]);
  });

  it('that install carries our patches to dependencies (patches/, applied without install scripts)', () => {
    const patched = readFileSync(join(app, 'node_modules/kafkajs/src/network/requestQueue/index.js'), 'utf8');
    expect(patched).toContain('Math.max(1, scheduleAt)');
  });

  it("starts the compiled API from it after compose init's compiled scripts, /health 200", async () => {
    const port = await freePort();
    const env = {
      KAFKA_BROKERS: BROKERS,
      DATABASE_URL,
      DATABASE_SCHEMA: schema,
      TOPIC_NAMESPACE: ns,
      NODE_PATH: '',
      LOG_LEVEL: 'info',
      KAFKAJS_NO_PARTITIONER_WARNING: '1',
    };
    const init = {
      'dist/scripts/create-topics.js': 'topics ensured',
      'dist/scripts/migrate.js': 'migrations applied',
    };
    for (const [script, done] of Object.entries(init)) {
      const out = execFileSync(process.execPath, [script], {
        cwd: app,
        env: { ...process.env, ...env },
        encoding: 'utf8',
        timeout: 60_000,
      });
      expect(out, script).toContain(done);
    }
    const api = startProcess(
      process.execPath,
      ['dist/services/api/main.js'],
      { ...env, API_HOST: '127.0.0.1', API_PORT: String(port) },
      app,
    );
    running.push(api);
    const base = `http://127.0.0.1:${port}`;
    await healthy(api, `${base}/health`);
    await healthy(api, `${base}/ready`);
    expect(await statusOf(`${base}/`), 'a page of dist/public').toBe(200);
    expect(await api.stop('SIGTERM', 20_000)).toBe(0);
  }, 150_000);

  it("starts the image's edge from it: the official uWebSockets.js binary for the image's Node and glibc", async () => {
    const image = /^ARG NODE_IMAGE=(\S+)/m.exec(readFileSync(join(ROOT, 'Dockerfile'), 'utf8'))?.[1] ?? '';
    const [, major, release] = /^node:(\d+)-(\w+)-slim$/.exec(image) ?? [];
    expect(major, `${image}: Node 24 LTS (package.json engines)`).toBe('24');
    const glibc = DEBIAN_GLIBC[release ?? ''];
    expect(glibc, `${image}: a Debian release whose glibc is known`).toBeDefined();
    const binary = join(
      app,
      'node_modules/uWebSockets.js',
      `uws_linux_${process.arch}_${NODE_ABI[major ?? '']}.node`,
    );
    const official = readFileSync(binary);
    const needs = readGlibcNeeds(official).needs;
    expect(
      needs.filter((n) => n.weak),
      'untouched by any install script',
    ).toEqual([]);
    const newest =
      needs
        .map((n) => n.version)
        .sort(compareGlibc)
        .at(-1) ?? '0';
    expect(
      compareGlibc(newest, glibc as string),
      `needs GLIBC_${newest}, ${image} has ${glibc}`,
    ).toBeLessThanOrEqual(0);

    const host = (process.report.getReport() as { header: { glibcVersionRuntime?: string } }).header
      .glibcVersionRuntime;
    const rebound = host ? rebindForGlibc(official, host) : undefined;
    if (rebound) writeFileSync(binary, rebound); // this host's install step, on the copy

    const [httpPort, wsPort] = [await freePort(), await freePort()];
    const edge = startProcess(
      process.execPath,
      ['dist/services/edge/main.js'],
      {
        KAFKA_BROKERS: BROKERS,
        DATABASE_URL,
        DATABASE_SCHEMA: schema,
        TOPIC_NAMESPACE: ns,
        EDGE_HTTP_PORT: String(httpPort),
        EDGE_WS_PORT: String(wsPort),
        GRPC_PORT: '0',
        KAFKAJS_NO_PARTITIONER_WARNING: '1',
      },
      app,
    );
    running.push(edge);
    try {
      await healthy(edge, `http://127.0.0.1:${httpPort}/ready`);
      // uWebSockets.js takes a subscription (credentials are off by default).
      const ws = await attempt({ http: httpPort, ws: wsPort, grpc: 0 }, 'ws', { path: 'crash' });
      expect(ws.status).toBe(200);
      ws.close();
      expect(await edge.stop('SIGTERM', 20_000)).toBe(0);
    } finally {
      if (rebound) writeFileSync(binary, official);
    }
  }, 120_000);

  it('runs the WebTransport edge from it under Deno, with the flags of its compose command', async () => {
    const compose = parse(readFileSync(join(ROOT, 'docker-compose.yml'), 'utf8'), { merge: true });
    const command = (compose.services['edge-webtransport'].command as string[]).join(' ');
    const args = /\bexec deno (run [^;&|]*dist\/services\/edge-webtransport\/main\.js)/.exec(command)?.[1];
    expect(args, command).toBeDefined();
    rmSync(join(app, '.data/auth'), { recursive: true, force: true }); // the API's token secret
    const httpPort = await freePort();
    const certDir = devCertDir('casino-build-wt-');
    const edge = startProcess(
      DENO_BIN,
      (args ?? '').split(/\s+/),
      {
        KAFKA_BROKERS: BROKERS,
        TOPIC_NAMESPACE: ns,
        WT_HOST: '127.0.0.1',
        WT_PORT: '0',
        WT_HTTP_PORT: String(httpPort),
        WT_DEV_CERT_DIR: certDir,
      },
      app,
    );
    running.push(edge);
    try {
      // `/ready`, not `/health`: Deno.serve answers /health before the key table (and with it the
      // token secret) is loaded, so on a slow machine /health came first (CI of stop 20).
      await healthy(edge, `http://127.0.0.1:${httpPort}/ready`);
      // Its token secret, made at start under dist/.data (the link to the app's .data).
      expect(existsSync(join(app, '.data/auth/token-secret'))).toBe(true);
      expect(await edge.stop('SIGTERM', 20_000)).toBe(0);
    } finally {
      rmSync(certDir, { recursive: true, force: true });
    }
  }, 120_000);
});
