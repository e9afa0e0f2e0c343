/**
 * The printed tables and the results' figures of bench/lifecycle.ts: cash-out latencies beside
 * their baselines (ratios), the cash-out run's counts and CPU, the watchers' delays per message kind
 * and the edge's CPU per delivery, lifecycle beside plain (ratios).
 */

import { type LatencySummary, latencySummary, report } from './lib.ts';
import type { CashOutRecord, CashOutRun, Probe } from './lifecycle-cash-out.ts';
import type { Timed } from './lifecycle-requests.ts';
import type { WatchRun, WatchVariant } from './lifecycle-watch.ts';

const f1 = (n: number) => (Number.isFinite(n) ? n.toFixed(1) : '-');
const f2 = (n: number) => (Number.isFinite(n) ? n.toFixed(2) : '-');
const ratio = (a: number, b: number) => (Number.isFinite(a / b) ? `${(a / b).toFixed(2)}×` : '-');

/** The outcome of a cash-out answer: `200`, or the status and problem code (`409 CRASHED`). */
export function outcomeOf(r: Timed<{ code?: string }>): string {
  return r.status === 200 ? '200' : `${r.status} ${r.body?.code ?? ''}`.trim();
}

/** Counts of each outcome. */
function outcomes(records: readonly CashOutRecord[]): Record<string, number> {
  const n: Record<string, number> = {};
  for (const r of records) n[outcomeOf(r)] = (n[outcomeOf(r)] ?? 0) + 1;
  return n;
}

export interface CashOutInput {
  readonly rate: number;
  readonly speed: number;
  readonly bettingMs: number;
  readonly baselines: { readonly round: Timed[]; readonly health: Timed[] };
  readonly run: CashOutRun;
}

/** Prints the cash-out tables. @returns their figures for the results file. */
export function cashOutTables(i: CashOutInput): Record<string, unknown> {
  const measured = <T extends { warmUp: boolean }>(t: readonly T[]) => t.filter((r) => !r.warmUp);
  const run = {
    ...i.run,
    records: measured(i.run.records),
    probes: { round: measured(i.run.probes.round), health: measured(i.run.probes.health) },
  };
  const accepted = run.records.filter((r) => r.status === 200);
  const logged = accepted.filter((r) => r.appendedAt !== undefined);
  const crashed = run.records.filter((r) => outcomeOf(r) === '409 CRASHED');
  const ok = (t: readonly Timed[]) => t.filter((r) => r.status === 200);
  const answer = (t: readonly Timed[]) => latencySummary(t.map((r) => r.answeredAt - r.sentAt));
  const base = answer(ok(i.baselines.round));
  const health = answer(ok(i.baselines.health));
  const during = { round: answer(ok(run.probes.round)), health: answer(ok(run.probes.health)) };
  const rows: [string, LatencySummary][] = [
    ['cash-out accepted: request → answer', answer(accepted)],
    [
      'cash-out accepted: request → engine decision (at)',
      latencySummary(logged.map((r) => (r.decidedAt as number) - r.sentAt)),
    ],
    [
      'cash-out accepted: request → decision on the log',
      latencySummary(logged.map((r) => (r.appendedAt as number) - r.sentAt)),
    ],
    ['cash-out crashed: request → answer (nothing appended)', answer(crashed)],
    ['baseline: GET /play/round (player bearer, one query)', base],
    ['baseline: engine GET /health (loopback HTTP floor)', health],
    ['during the flights: GET /play/round', during.round],
    ['during the flights: engine GET /health', during.health],
  ];
  report(
    `Cash-out at ${i.rate}/s during crash flights (ROUND_SPEED ${i.speed}, demo sessions), latency ms; baselines at the same pace`,
    rows.map(([what, l]) => ({
      what,
      n: l.n,
      p50: f1(l.p50),
      p99: f1(l.p99),
      max: f1(l.max),
      'p50 ÷ /play/round': ratio(l.p50, base.p50),
      'p99 ÷ /play/round': ratio(l.p99, base.p99),
      'p99 ÷ /health': ratio(l.p99, health.p99),
      'p99 ÷ /play/round during': ratio(l.p99, during.round.p99),
    })),
  );
  const sent = run.records.length;
  const cpuPct = (name: string) => f1(((run.cpuS[name] ?? Number.NaN) / run.pacedS) * 100);
  const perCashOutMs = (name: string) => f2(((run.cpuS[name] ?? Number.NaN) / sent) * 1000);
  const counts = {
    rounds: run.rounds.length,
    'rounds flown with cash-outs': run.rounds.filter((r) => r.cashOuts > 0).length,
    'bets taken': run.rounds.reduce((s, r) => s + r.bets, 0),
    'bets refused': Object.values(run.betRefusals).reduce((s, n) => s + n, 0),
    'cash-outs sent': sent,
    accepted: accepted.length,
    'accepted, record not found on the log': accepted.length - logged.length,
    'paced s': f1(run.pacedS),
    'sent/s while pacing': f1(sent / run.pacedS),
  };
  report('Cash-out run', [counts]);
  report('Cash-out answers', [outcomes(run.records)]);
  const flown = i.run.rounds.filter((r) => r.cashOuts > 0);
  report(
    'Per flight (warm-up flights are not in the figures above), request → answer ms, and the baselines sent during it',
    [...new Set(i.run.records.map((r) => r.flight))].map((flight) => {
      const of = i.run.records.filter((r) => r.flight === flight);
      const l = answer(of);
      const probe = (t: readonly Probe[]) => answer(ok(t.filter((p) => p.flight === flight)));
      return {
        flight,
        'warm-up': of[0]?.warmUp ? 'yes' : '',
        sent: of.length,
        accepted: of.filter((r) => r.status === 200).length,
        p50: f1(l.p50),
        p99: f1(l.p99),
        max: f1(l.max),
        '/play/round p99': f1(probe(i.run.probes.round).p99),
        '/health p99': f1(probe(i.run.probes.health).p99),
        // The flights are the rounds with cash-outs, in order.
        ...Object.fromEntries(
          Object.entries(flown[flight - 1]?.cpuS ?? {}).map(([name, cpu]) => [
            `${name} CPU %`,
            f1((cpu / ((flown[flight - 1]?.pacedMs ?? Number.NaN) / 1000)) * 100),
          ]),
        ),
      };
    }),
  );
  if (Object.keys(run.betRefusals).length > 0) report('Bets refused', [run.betRefusals]);
  report('CPU while cash-outs were paced (% of one core; ms per cash-out sent)', [
    Object.fromEntries(
      Object.keys(run.cpuS).flatMap((name) => [
        [`${name} %`, cpuPct(name)],
        [`${name} ms/cash-out`, perCashOutMs(name)],
      ]),
    ),
  ]);
  const api = run.records.filter((r) => r.status !== 200 && r.status !== 409);
  if (api.length > 0)
    console.log(`first unexpected answer: ${api[0]?.status} ${JSON.stringify(api[0]?.body)}`);
  return {
    latency: Object.fromEntries(rows),
    counts,
    outcomes: outcomes(run.records),
    betRefusals: run.betRefusals,
    rounds: run.rounds,
    pacedS: run.pacedS,
    cpuS: run.cpuS,
    // Every request, for a look at when the slow ones happened: [sent (Unix ms), answer, engine
    // decision, on the log (ms after sending; null when none)], outcome, flight, warm-up.
    samples: i.run.records.map((r) => [
      Math.round(r.sentAt),
      +(r.answeredAt - r.sentAt).toFixed(2),
      r.decidedAt === undefined ? null : +(r.decidedAt - r.sentAt).toFixed(2),
      r.appendedAt === undefined ? null : +(r.appendedAt - r.sentAt).toFixed(2),
      outcomeOf(r),
      r.flight,
      r.warmUp,
    ]),
    baselineOutcomes: {
      round: outcomes(i.baselines.round as CashOutRecord[]),
      health: outcomes(i.baselines.health as CashOutRecord[]),
      roundDuring: outcomes(run.probes.round as CashOutRecord[]),
      healthDuring: outcomes(run.probes.health as CashOutRecord[]),
    },
  };
}

/** Prints the watchers' tables. @returns their figures for the results file. */
export function watchTables(
  o: { speed: number; watchers: number; seconds: number; idleSeconds: number; clientProcesses: number },
  run: WatchRun,
): Record<string, unknown> {
  const plain = run.variants.find((v) => v.label === 'plain');
  const plainRound = plain?.figures.find((f) => f.kind === 'round');
  report(
    `${o.watchers} WebSocket watchers of crash (ROUND_SPEED ${o.speed}), ${o.seconds} s each, delay ms of what they see; baseline plain rounds`,
    run.variants.flatMap((v) =>
      v.figures.map((f) => ({
        subscription: v.label,
        message: f.kind,
        watchers: v.opened,
        'messages (log)': f.messages,
        deliveries: f.deliveries,
        missing: f.missing,
        'append→rcv p50': f1(f.fromAppend.p50),
        'append→rcv p99': f1(f.fromAppend.p99),
        'append→rcv max': f1(f.fromAppend.max),
        'event→rcv p50': f1(f.fromEvent.p50),
        'event→rcv p99': f1(f.fromEvent.p99),
        'spread p99': f1(f.spread.p99),
        'p99 ÷ plain': ratio(f.fromAppend.p99, plainRound?.fromAppend.p99 ?? Number.NaN),
      })),
    ),
  );
  const idleRate = run.idle.edgeCpuS / run.idle.wallS;
  // Over idle: what the edge used beyond its idle rate; not a figure when within the idle's noise.
  const perDelivery = (v: WatchVariant, net: boolean) => {
    const cpu = v.edgeCpuS - (net ? idleRate * v.wallS : 0);
    return cpu > 0 ? (cpu / v.deliveries) * 1e6 : Number.NaN;
  };
  const cpuRows = run.variants.map((v) => ({
    subscription: v.label,
    'edge CPU s': f2(v.edgeCpuS),
    'edge CPU %': f1((v.edgeCpuS / v.wallS) * 100),
    'over idle %': f1((v.edgeCpuS / v.wallS - idleRate) * 100),
    deliveries: v.deliveries,
    'µs/delivery': f1(perDelivery(v, false)),
    'µs/delivery over idle': f1(perDelivery(v, true)),
    'over idle ÷ plain': plain ? ratio(perDelivery(v, true), perDelivery(plain, true)) : '-',
    heartbeats: v.heartbeats,
    'client CPU %': f1((v.clientCpuS / v.wallS) * 100),
  }));
  report(
    `Edge CPU, % of one core (idle, no watchers, before and after: ${f1(idleRate * 100)}% over ${f1(run.idle.wallS)} s; '-' = within the idle's noise; clients in ${o.clientProcesses} processes)`,
    cpuRows,
  );
  for (const v of run.variants)
    if (v.failed > 0 || v.unreadable > 0)
      console.log(
        `${v.label}: ${v.failed} watchers failed (${v.firstError}), ${v.unreadable} unreadable frames`,
      );
  return { idle: run.idle, variants: run.variants, cpu: cpuRows };
}
