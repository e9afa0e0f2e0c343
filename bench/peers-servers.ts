/**
 * The servers `npm run bench -- peers` (bench/peers.ts) compares, each fed from the benchmark's
 * own `rounds` topic and serving WebSocket subscribers of crash on 127.0.0.1:
 *
 * - `edge`: this checkout's edge (services/edge/main.ts) on this Node (24), uWebSockets.js;
 * - `edge-x<N>`: N such edges sharing one WebSocket port (uWS listens with SO_REUSEPORT, so the
 *   kernel spreads connections over them), each reading the log itself: one per core;
 * - `edge-t<N>`: one edge process with EDGE_WS_THREADS=N (services/edge/ws-threads.ts): the same
 *   sharing of the port, by threads of one process (its CPU and memory are the process's);
 * - `edge-s<MB>`: the edge with V8's young generation capped at MB per semi-space
 *   (`--max-semi-space-size`) instead of the cap services/edge/runtime.ts gives `edge`: memory per
 *   connection against CPU;
 * - `edge@<revision>`: the edge of another commit on this Node, from `git archive` into
 *   .cache/bench/ (this checkout's node_modules when that commit's lock is the same, else its own
 *   `npm ci`): before and after a change in one run;
 * - `centrifugo`: Centrifugo PINNED below, built from source with `go install` into the git-ignored
 *   .cache/centrifugo/, fed by its Kafka consumer in publication data mode (the JSON twin records of
 *   bench/edge-harness.ts), clients on its JSON protocol (`/connection/websocket`, connect and
 *   subscribe in the first message, `{}` pings answered), anonymous (`client.insecure`);
 * - `edge-node20`: the edge as it was before Node 24 (BASELINE_COMMIT: Node 20,
 *   @trufflesuite/uws-js-unofficial), from `git archive` of that commit into .cache/bench/ with its
 *   own locked `npm install`, on the pinned Node 20 of scripts/node-env.sh;
 * - `bun`, `ws`: bench/peers-ref.ts under Bun (npm package @oven/bun-linux-x64, pinned) and under
 *   Node with the `ws` package: references for scale only.
 *
 * Every cache is made on first use and kept; nothing outside the checkout's .cache is written but
 * Go's and npm's own caches.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { waitFor } from '../tests/support/poll.ts';
import { freePort, ROOT, type Service, startProcess } from '../tests/support/processes.ts';
import { type BenchLog, type EdgeProcess, type NodeEdgeOptions, startNodeEdge } from './edge-harness.ts';
import type { WsProtocol } from './edge-wire.ts';

export const CENTRIFUGO = { module: 'github.com/centrifugal/centrifugo/v6', version: 'v6.9.1' } as const;
export const BUN = {
  spec: '@oven/bun-linux-x64@1.4.5',
  integrity:
    'sha512-IWX9BELoGHAUtMonkeSaNaZwXzRk+oDw6Mk+HBFXd3KHYIBNBsIGRupMZPcgNoDbJpLu6gAJjIoIVPZtt1aJ1g==',
} as const;
/** The last commit whose edge ran on Node 20 with @trufflesuite/uws-js-unofficial. */
export const BASELINE_COMMIT = 'f727c3ee7541e4e5fbef3e950e1cd33c88c4138b';
export const NODE20 = '20.20.2';
/** The header naming Centrifugo's channels in publication data mode. */
export const CENTRIFUGO_HEADER = 'centrifugo-channels';

export type PeerName =
  | 'edge'
  | 'centrifugo'
  | 'edge-node20'
  | 'bun'
  | 'ws'
  | `edge-x${number}`
  | `edge-t${number}`
  | `edge-s${number}`
  | `edge@${string}`;
export const PEERS: readonly PeerName[] = ['edge', 'centrifugo', 'edge-node20', 'bun', 'ws'];

/** Whether `name` names a server startPeer knows (PEERS, `edge-x<N>`, `edge-t<N>`, `edge-s<MB>`, `edge@<revision>`). */
export function isPeerName(name: string): name is PeerName {
  return (
    (PEERS as readonly string[]).includes(name) ||
    /^edge-[xt][1-9]$/.test(name) ||
    /^edge-s[1-9][0-9]?$/.test(name) ||
    /^edge@\S+$/.test(name)
  );
}

/** A running server under test. */
export interface PeerServer {
  readonly name: PeerName;
  readonly pid: number;
  /** Every process of the server (`pid` first): CPU and memory are their sums. */
  readonly pids: readonly number[];
  readonly port: number;
  /** WebSocket path of crash subscribers. */
  readonly path: string;
  readonly ws?: WsProtocol;
  stop(): Promise<void>;
}

const CACHE = join(ROOT, '.cache');
const run = (cmd: string, args: string[], cwd = ROOT, env: NodeJS.ProcessEnv = process.env) =>
  execFileSync(cmd, args, {
    cwd,
    env,
    stdio: ['ignore', 'pipe', 'inherit'],
    encoding: 'utf8',
    timeout: 1_800_000,
  });

/** Centrifugo's binary, built with `go install` on first use. */
export function centrifugoBinary(): string {
  const bin = join(CACHE, 'centrifugo', CENTRIFUGO.version, 'bin');
  const exe = join(bin, 'centrifugo');
  if (!existsSync(exe)) {
    console.error(`building Centrifugo ${CENTRIFUGO.version} with go install (first run only)`);
    mkdirSync(bin, { recursive: true });
    run('go', ['install', `${CENTRIFUGO.module}@${CENTRIFUGO.version}`], ROOT, {
      ...process.env,
      GOBIN: bin,
    });
  }
  return exe;
}

/** Bun's binary from its npm package (integrity checked), on first use. */
export function bunBinary(): string {
  const dir = join(CACHE, 'bench', 'bun-1.4.5');
  const exe = join(dir, 'bin', 'bun');
  if (!existsSync(exe)) {
    const tmp = mkdtempSync(join(CACHE, 'bench-fetch-'));
    try {
      const tgz = run('npm', ['pack', '--silent', BUN.spec], tmp).trim();
      const got = `sha512-${createHash('sha512')
        .update(readFileSync(join(tmp, tgz)))
        .digest('base64')}`;
      if (got !== BUN.integrity) throw new Error(`${BUN.spec}: integrity ${got}, pinned ${BUN.integrity}`);
      run('tar', ['-xzf', join(tmp, tgz), '-C', tmp]);
      mkdirSync(join(CACHE, 'bench'), { recursive: true });
      renameSync(join(tmp, 'package'), dir);
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
  }
  return exe;
}

/** The Node 20 binary of scripts/node-env.sh (fetched on first use). */
export function node20Binary(): string {
  const out = run('bash', [
    '-c',
    `source scripts/_common.sh; source scripts/node-env.sh; use_node_version ${NODE20}`,
  ]);
  return join(out.trim().split('\n').at(-1) as string, 'node');
}

/** The baseline checkout (BASELINE_COMMIT) with its own dependencies, made on first use. */
export function baselineCheckout(node20: string): string {
  const dir = join(CACHE, 'bench', `edge-${BASELINE_COMMIT.slice(0, 12)}`);
  if (!existsSync(join(dir, 'node_modules', '.package-lock.json'))) {
    console.error(`preparing the Node 20 edge of ${BASELINE_COMMIT} in ${dir} (first run only)`);
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    execFileSync('bash', ['-c', `git archive ${BASELINE_COMMIT} | tar -x -C '${dir}'`], { cwd: ROOT });
    // Its own lock, on Node 20 (its engines); no install scripts (none of the edge's needs one).
    const path = `${join(node20, '..')}:${process.env.PATH}`;
    run('npm', ['install', '--ignore-scripts', '--no-audit', '--no-fund', '--loglevel=error'], dir, {
      ...process.env,
      PATH: path,
    });
  }
  return dir;
}

/**
 * The checkout of `revision` (any git revision) for `edge@<revision>`, made on first use: its
 * files from `git archive`, and this checkout's node_modules when its package-lock.json is the
 * same as the working tree's, else its own `npm ci` on this Node (its postinstall included).
 */
export function revisionCheckout(revision: string): string {
  const sha = run('git', ['rev-parse', '--verify', `${revision}^{commit}`]).trim();
  const dir = join(CACHE, 'bench', `edge-${sha.slice(0, 12)}-node${process.versions.node.split('.')[0]}`);
  if (!existsSync(join(dir, 'package.json'))) {
    console.error(`preparing the edge of ${sha} in ${dir} (first run only)`);
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    execFileSync('bash', ['-c', `git archive ${sha} | tar -x -C '${dir}'`], { cwd: ROOT });
  }
  if (!existsSync(join(dir, 'node_modules'))) {
    const sameLock = spawnSync('git', ['diff', '--quiet', sha, '--', 'package-lock.json'], { cwd: ROOT });
    if (sameLock.status === 0) symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'));
    else run('npm', ['ci', '--no-audit', '--no-fund', '--loglevel=error'], dir);
  }
  return dir;
}

async function ready(service: Service, url: string): Promise<void> {
  await waitFor(
    `${url} to answer 200`,
    async () => {
      if (service.child.exitCode !== null) throw new Error(`exited:\n${service.output().slice(-3000)}`);
      const res = await fetch(url).catch(() => undefined);
      return res?.status === 200 ? true : undefined;
    },
    120_000,
    200,
  );
}

/** Starts `name` on free ports, reading `log`'s topic; resolves once it is ready. */
export async function startPeer(name: PeerName, log: BenchLog, topic: string): Promise<PeerServer> {
  const brokers = log.config.kafka.brokers.join(',');
  /** One edge process as a peer; the JSON twins are undecodable for it, so its warnings are off. */
  const oneEdge = async (o: NodeEdgeOptions): Promise<PeerServer> => {
    const edge = await startNodeEdge(log, { gcHook: false, ...o, env: { LOG_LEVEL: 'error', ...o.env } });
    return {
      name,
      pid: edge.pid,
      pids: [edge.pid],
      port: edge.ports.ws,
      path: '/ws/crash',
      stop: () => edge.stop(),
    };
  };
  if (name === 'edge' || name === 'edge-node20' || name.startsWith('edge@')) {
    const node = name === 'edge-node20' ? node20Binary() : undefined;
    const cwd = node
      ? baselineCheckout(node)
      : name.startsWith('edge@')
        ? revisionCheckout(name.slice('edge@'.length))
        : undefined;
    return oneEdge({ ...(node ? { node } : {}), ...(cwd ? { cwd } : {}) });
  }
  const semi = /^edge-s(\d+)$/.exec(name);
  if (semi) return oneEdge({ nodeFlags: [`--max-semi-space-size=${semi[1]}`] });
  const threads = /^edge-t(\d)$/.exec(name);
  if (threads) return oneEdge({ env: { EDGE_WS_THREADS: threads[1] as string } });
  const workers = /^edge-x(\d)$/.exec(name);
  if (workers) {
    const port = await freePort();
    const edges: EdgeProcess[] = [];
    for (let i = 0; i < Number(workers[1]); i++)
      edges.push(
        await startNodeEdge(log, { gcHook: false, env: { LOG_LEVEL: 'error', EDGE_WS_PORT: String(port) } }),
      );
    const pids = edges.map((e) => e.pid);
    return {
      name,
      pid: pids[0] as number,
      pids,
      port,
      path: '/ws/crash',
      stop: async () => {
        await Promise.all(edges.map((e) => e.stop()));
      },
    };
  }
  const port = await freePort();
  if (name === 'centrifugo') {
    const dir = mkdtempSync(join(CACHE, 'bench-centrifugo-'));
    const config = {
      log: { level: 'error' },
      http_server: { address: '127.0.0.1', port },
      client: { insecure: true },
      health: { enabled: true },
      usage_stats: { disabled: true },
      consumers: [
        {
          enabled: true,
          name: 'rounds',
          type: 'kafka',
          kafka: {
            brokers: log.config.kafka.brokers,
            topics: [topic],
            consumer_group: `${log.ns}centrifugo`,
            publication_data_mode: { enabled: true, channels_header: CENTRIFUGO_HEADER },
          },
        },
      ],
    };
    writeFileSync(join(dir, 'config.json'), JSON.stringify(config, null, 2));
    const service = startProcess(centrifugoBinary(), ['--config', join(dir, 'config.json')], {}, dir);
    await ready(service, `http://127.0.0.1:${port}/health`);
    return {
      name,
      pid: service.child.pid as number,
      pids: [service.child.pid as number],
      port,
      path: '/connection/websocket',
      ws: {
        hello: `${JSON.stringify({ id: 1, connect: {} })}\n${JSON.stringify({ id: 2, subscribe: { channel: 'crash' } })}`,
        answerEmptyPings: true,
      },
      async stop() {
        await service.stop('SIGTERM');
        rmSync(dir, { recursive: true, force: true });
      },
    };
  }
  const env = { KAFKA_BROKERS: brokers, TOPIC: topic, PORT: String(port) };
  const service =
    name === 'bun'
      ? startProcess(bunBinary(), ['bench/peers-ref.ts'], env)
      : startProcess(process.execPath, ['--import', 'tsx', 'bench/peers-ref.ts'], env);
  await ready(service, `http://127.0.0.1:${port}/ready`);
  return {
    name,
    pid: service.child.pid as number,
    pids: [service.child.pid as number],
    port,
    path: '/ws/crash',
    stop: async () => {
      await service.stop('SIGTERM');
    },
  };
}
