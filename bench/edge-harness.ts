/**
 * Shared set-up of the edge benchmarks (bench/edge-latency.ts, bench/edge-fanout.ts): a fresh
 * `rounds` topic the benchmark appends crash rounds to, the Node edge (services/edge/main.ts) as
 * a child process, and readings of a process from /proc (resident memory, CPU time, open
 * descriptors). The subscribers are in bench/edge-pool.ts (client processes) and
 * bench/edge-wt.ts (Chromium).
 */
import { readdirSync, readFileSync } from 'node:fs';
import type { Producer } from 'kafkajs';
import { createKafka } from '../lib/log/kafka.ts';
import { encodeRound } from '../lib/log/rounds-codec.ts';
import { ensureTopics, topicName } from '../lib/log/topics.ts';
import { createLogger } from '../lib/logger.ts';
import { toStreamForm } from '../rules/rounds/round.ts';
import { EDGE_NODE_FLAGS } from '../services/edge/runtime.ts';
import { type Config, loadConfig } from '../tests/support/config.ts';
import { sampleValue } from '../tests/support/metrics.ts';
import { waitFor } from '../tests/support/poll.ts';
import { freePort, type Service, startProcess, uniqueId } from '../tests/support/processes.ts';
import { syntheticRound } from '../tests/support/rounds-fixture.ts';

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The benchmark's own topic and producer; every round is a crash round with a rising id. */
export interface BenchLog {
  readonly ns: string;
  readonly config: Config;
  /** Appends `n` rounds `gapMs` apart (one send each, acks all); resolves after the last ack. */
  spaced(n: number, gapMs: number): Promise<void>;
  /** Appends `n` rounds in one batch; resolves after the ack. */
  burst(n: number): Promise<void>;
  /** Deletes every topic of the namespace and disconnects. */
  close(): Promise<void>;
}

export interface BenchLogOptions {
  /**
   * Each round also as a record of its stream-form JSON (what the edge sends a subscriber, with
   * `timestamp` = the time it was made, Unix ms) carrying the header `header` = `channel`: the form
   * Centrifugo's Kafka consumer publishes in its publication data mode. Same topic, same key, right
   * after the Avro record; the edge skips it as undecodable, Centrifugo skips records without the
   * header.
   */
  readonly jsonTwin?: { readonly header: string; readonly channel: string };
}

export async function openBenchLog(prefix: string, o: BenchLogOptions = {}): Promise<BenchLog> {
  const ns = `${uniqueId(prefix)}-`;
  const config = loadConfig(process.env, { TOPIC_NAMESPACE: ns });
  const kafka = createKafka(config, prefix, createLogger('bench', 'warn'));
  const admin = kafka.admin();
  await admin.connect();
  await ensureTopics(admin, config);
  const producer: Producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
  await producer.connect();
  const topic = topicName(config, 'rounds');
  let seq = 0;
  const twin = o.jsonTwin;
  const messagesOfOne = () => {
    const r = syntheticRound(0, ++seq, Date.now());
    const avro = { key: r.game_slug, value: encodeRound(r) };
    if (!twin) return [avro];
    const json = JSON.stringify(toStreamForm(r, Date.now()));
    return [avro, { key: r.game_slug, value: json, headers: { [twin.header]: twin.channel } }];
  };
  return {
    ns,
    config,
    async spaced(n, gapMs) {
      const t0 = Date.now();
      for (let i = 0; i < n; i++) {
        await sleep(t0 + i * gapMs - Date.now());
        await producer.send({ topic, acks: -1, messages: messagesOfOne() });
      }
    },
    async burst(n) {
      await producer.send({ topic, acks: -1, messages: Array.from({ length: n }, messagesOfOne).flat() });
    },
    async close() {
      await producer.disconnect();
      // Every topic of the namespace: the registry's, and any a service made (e.g. auth keys).
      const topics = (await admin.listTopics()).filter((t) => t.startsWith(ns));
      await admin.deleteTopics({ topics }).catch(() => {});
      await admin.disconnect();
    },
  };
}

/** A running edge process and where its listeners are. */
export interface EdgeProcess {
  readonly service: Service;
  readonly pid: number;
  readonly ports: { readonly ws: number; readonly http: number; readonly grpc: number };
  /** Value of the sample `name` with `labels` (among others) on the edge's /metrics (0 when absent). */
  metric(name: string, labels?: Record<string, string>): Promise<number>;
  /** Full GC in the edge (with `gcHook`), then a pause for it to finish; else only the pause. */
  gc(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Reads one sample of the Prometheus text exposition at `url` (tests/support/metrics.ts: whatever
 * other labels, such as the registry's `service`, it carries); 0 when absent.
 * @throws when several samples match.
 */
export async function scrape(
  url: string,
  name: string,
  labels: Record<string, string> = {},
): Promise<number> {
  return sampleValue(await (await fetch(url)).text(), name, labels) ?? 0;
}

export interface NodeEdgeOptions {
  /** Preload bench/edge-gc-hook.ts with --expose-gc, so `gc()` of the result works. */
  readonly gcHook?: boolean;
  /** Extra node flags (e.g. `--cpu-prof`, `--cpu-prof-dir=<dir>`), after the edge's own (a V8 flag given twice: the last counts). */
  readonly nodeFlags?: readonly string[];
  /** The node binary (default: this process's) and the checkout it runs the edge from (default: this one). */
  readonly node?: string;
  readonly cwd?: string;
  /** Environment added to (or replacing) the edge's defaults below. */
  readonly env?: Readonly<Record<string, string>>;
}

/** Starts services/edge/main.ts on free ports, in the topic namespace `log.ns`, and waits for /ready. */
export async function startNodeEdge(
  log: Pick<BenchLog, 'ns'>,
  o: NodeEdgeOptions = {},
): Promise<EdgeProcess> {
  const ports = { ws: await freePort(), http: await freePort(), grpc: await freePort() };
  const flags = [
    // As the edge is run (services/edge/runtime.ts), unless it is another runtime's edge (a baseline).
    ...(o.node ? [] : EDGE_NODE_FLAGS),
    ...(o.nodeFlags ?? []),
    ...(o.gcHook
      ? ['--expose-gc', '--import', 'tsx', '--import', './bench/edge-gc-hook.ts']
      : ['--import', 'tsx']),
  ];
  const service = startProcess(
    o.node ?? process.execPath,
    [...flags, 'services/edge/main.ts'],
    {
      TOPIC_NAMESPACE: log.ns,
      EDGE_HOST: '127.0.0.1',
      EDGE_HTTP_PORT: String(ports.http),
      EDGE_WS_PORT: String(ports.ws),
      GRPC_HOST: '127.0.0.1',
      GRPC_PORT: String(ports.grpc),
      EDGE_DRAIN_MS: '500',
      // Subscribers connect without a credential on every protocol (gRPC requires one by default):
      // a credential is verified once when a stream opens, never per delivered round, so this
      // leaves the delivery figures as they are and only spares the set-up of keys.
      AUTH_REQUIRE_WS: 'false',
      AUTH_REQUIRE_SSE: 'false',
      AUTH_REQUIRE_GRPC: 'false',
      LOG_LEVEL: 'warn',
      ...o.env,
    },
    o.cwd,
  );
  await waitFor(
    'the edge to be ready',
    async () => {
      if (service.child.exitCode !== null) throw new Error(`edge exited:\n${service.output()}`);
      const res = await fetch(`http://127.0.0.1:${ports.http}/ready`);
      return res.status === 200 ? true : undefined;
    },
    60_000,
    200,
  );
  const metricsUrl = `http://127.0.0.1:${ports.http}/metrics`;
  return {
    service,
    pid: service.child.pid as number,
    ports,
    metric: (name, labels) => scrape(metricsUrl, name, labels),
    async gc() {
      if (o.gcHook) service.child.kill('SIGUSR2');
      await sleep(1_000);
    },
    async stop() {
      await service.stop('SIGTERM');
    },
  };
}

/** Resident memory (KiB), CPU time used (s; of which in the kernel) and open descriptors of `pid`. */
export function procStats(pid: number): { rssKiB: number; cpuS: number; sysS: number; fds: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const rssKiB = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? Number.NaN);
  // Fields 14 and 15 of /proc/<pid>/stat (utime, stime) in clock ticks (100 Hz on Linux).
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const sysS = Number(fields[12]) / 100;
  const cpuS = Number(fields[11]) / 100 + sysS;
  return { rssKiB, cpuS, sysS, fds: readdirSync(`/proc/${pid}/fd`).length };
}

/** The hard limit of open files of process `pid` (what one edge process can ever hold). */
export function openFilesLimit(pid: number): number {
  const line = readFileSync(`/proc/${pid}/limits`, 'utf8')
    .split('\n')
    .find((l) => l.startsWith('Max open files'));
  return Number(line?.trim().split(/\s+/)[4] ?? Number.NaN);
}

/** CPU seconds used so far by all of `pids` (processes that ended count 0). */
export function cpuOf(pids: readonly number[]): number {
  let total = 0;
  for (const p of pids) {
    try {
      total += procStats(p).cpuS;
    } catch {
      // ended
    }
  }
  return total;
}

/** Process ids of `pid` and all its descendants (e.g. Chromium's renderers and helpers). */
export function processTree(pid: number): number[] {
  const children = new Map<number, number[]>();
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = readFileSync(`/proc/${d}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      children.set(ppid, [...(children.get(ppid) ?? []), Number(d)]);
    } catch {
      // the process ended meanwhile
    }
  }
  const out: number[] = [];
  const walk = (p: number) => {
    out.push(p);
    for (const c of children.get(p) ?? []) walk(c);
  };
  walk(pid);
  return out;
}
