/**
 * Where the CPU went during a wallet scenario, and what the services measured themselves: CPU
 * seconds of every process of the stack (settlement and saga summed over their instances), of this
 * benchmark process (players, collector, pacer), of the broker and of Postgres (all backends,
 * shared with anything else using them), and the machine's busy cores from /proc/stat (everything
 * else on the machine is "other"); plus, from the settlement and saga `/metrics`, their consumers'
 * committed writes (count, mean duration, records per Kafka batch) and the saga's callback attempts
 * (count, mean duration by kind). Readings are taken before and after a scenario (usageDelta).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { parseMetrics, type Sample } from '../tests/support/metrics.ts';
import { cpuOf } from './edge-harness.ts';
import type { WalletStack } from './wallet-stack.ts';

export interface UsageSnapshot {
  readonly at: number;
  /** CPU seconds so far by process group. */
  readonly cpu: Readonly<Record<string, number>>;
  /** Busy and total clock ticks of all cores (/proc/stat). */
  readonly machine: { readonly busy: number; readonly total: number };
  readonly samples: readonly Sample[];
}

export interface UsageDelta {
  readonly seconds: number;
  /** 1-minute load average at the end. */
  readonly loadavg1: number;
  /** Cores busy on average, the whole machine. */
  readonly machineCores: number;
  /** Cores used on average by each process group, and by everything else ("other"). */
  readonly cores: Readonly<Record<string, number>>;
  /** Committed writes per consumer (`<service> <projection>`): count, mean ms, records per Kafka batch. */
  readonly writes: Readonly<Record<string, { n: number; meanMs: number; recordsPerBatch: number }>>;
  /** Saga callback attempts by kind: count and mean ms. */
  readonly callbacks: Readonly<Record<string, { n: number; meanMs: number }>>;
  /** Saga callback attempts by `kind answer-class` (ok, refused, failed, …). */
  readonly answers: Readonly<Record<string, number>>;
  /** Whether the operator's circuit breaker was open at the end (wallet_saga_breaker_open). */
  readonly breakerOpen: boolean;
}

/** Ids of running processes whose command line contains `needle` (and whose name is `comm`). */
function pidsOf(comm: string, needle = ''): number[] {
  const out: number[] = [];
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      if (readFileSync(`/proc/${d}/comm`, 'utf8').trim() !== comm) continue;
      if (needle && !readFileSync(`/proc/${d}/cmdline`, 'utf8').includes(needle)) continue;
      out.push(Number(d));
    } catch {
      // ended meanwhile
    }
  }
  return out;
}

function machineTicks(): { busy: number; total: number } {
  const [, ...f] = (readFileSync('/proc/stat', 'utf8').split('\n')[0] ?? '').trim().split(/\s+/);
  const n = f.map(Number);
  const total = n.slice(0, 8).reduce((a, b) => a + b, 0);
  return { busy: total - (n[3] ?? 0) - (n[4] ?? 0), total };
}

/** Reads the CPU counters and the services' metrics now. */
export async function usageSnapshot(stack: WalletStack): Promise<UsageSnapshot> {
  const cpu: Record<string, number> = {};
  for (const [name, pid] of stack.pids()) {
    const group = name.replace(/-\d+$/, '');
    cpu[group] = (cpu[group] ?? 0) + cpuOf([pid]);
  }
  const own = process.cpuUsage();
  cpu.bench = (own.user + own.system) / 1e6;
  cpu.kafka = cpuOf(pidsOf('java', 'kafka.Kafka'));
  cpu.postgres = cpuOf(pidsOf('postgres'));
  const urls = [...stack.metricsUrls.settlement, ...stack.metricsUrls.saga];
  const texts = await Promise.all(
    urls.map((u) =>
      fetch(u).then(
        (r) => r.text(),
        () => '',
      ),
    ),
  );
  const samples = texts.flatMap((t, i) =>
    parseMetrics(t).map((s) => ({ ...s, labels: { ...s.labels, url: urls[i] as string } })),
  );
  return { at: Date.now(), cpu, machine: machineTicks(), samples };
}

/** Sum of `name` over the samples matching `pick`, by the key `keyOf` gives. */
function sums(samples: readonly Sample[], name: string, keyOf: (s: Sample) => string): Map<string, number> {
  const out = new Map<string, number>();
  for (const s of samples) if (s.name === name) out.set(keyOf(s), (out.get(keyOf(s)) ?? 0) + s.value);
  return out;
}

/** What happened between two snapshots. */
export function usageDelta(a: UsageSnapshot, b: UsageSnapshot): UsageDelta {
  const seconds = (b.at - a.at) / 1000;
  const cores: Record<string, number> = {};
  for (const [k, v] of Object.entries(b.cpu)) cores[k] = (v - (a.cpu[k] ?? 0)) / seconds;
  const dt = b.machine.total - a.machine.total;
  const ncpu = (readFileSync('/proc/stat', 'utf8').match(/^cpu\d+ /gm) ?? []).length || 1;
  const machineCores = dt > 0 ? ((b.machine.busy - a.machine.busy) / dt) * ncpu : Number.NaN;
  cores.other = Math.max(0, machineCores - Object.values(cores).reduce((x, y) => x + y, 0));

  const diff = (name: string, keyOf: (s: Sample) => string) => {
    const before = sums(a.samples, name, keyOf);
    return new Map([...sums(b.samples, name, keyOf)].map(([k, v]) => [k, v - (before.get(k) ?? 0)]));
  };
  const consumer = (s: Sample) =>
    `${s.labels.service ?? '?'} ${s.labels.projection ?? '?'}${s.labels.topic ? ` (${s.labels.topic})` : ''}`;
  const txSum = diff('projector_transaction_seconds_sum', consumer);
  const txCount = diff('projector_transaction_seconds_count', consumer);
  const recs = diff('projector_batch_size_sum', consumer);
  const batches = diff('projector_batch_size_count', consumer);
  const writes: Record<string, { n: number; meanMs: number; recordsPerBatch: number }> = {};
  for (const [k, n] of txCount)
    if (n > 0)
      writes[k] = {
        n,
        meanMs: ((txSum.get(k) ?? 0) / n) * 1000,
        recordsPerBatch: (recs.get(k) ?? 0) / Math.max(1, batches.get(k) ?? 0),
      };
  const kind = (s: Sample) => s.labels.kind ?? '?';
  const cbSum = diff('wallet_saga_callback_seconds_sum', kind);
  const callbacks: Record<string, { n: number; meanMs: number }> = {};
  for (const [k, n] of diff('wallet_saga_callback_seconds_count', kind))
    if (n > 0) callbacks[k] = { n, meanMs: ((cbSum.get(k) ?? 0) / n) * 1000 };
  const answers = Object.fromEntries(
    [...diff('wallet_saga_callback_attempts_total', (s) => `${s.labels.kind} ${s.labels.answer}`)].filter(
      ([, n]) => n > 0,
    ),
  );
  const breakerOpen = b.samples.some((s) => s.name === 'wallet_saga_breaker_open' && s.value > 0);
  return {
    seconds,
    loadavg1: loadavg()[0] ?? Number.NaN,
    machineCores,
    cores,
    writes,
    callbacks,
    answers,
    breakerOpen,
  };
}
