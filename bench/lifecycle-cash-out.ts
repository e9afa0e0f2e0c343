/**
 * The cash-out measure of bench/lifecycle.ts ("p50/p99 from the request to
 * the decision on the log, at 100 cash-outs a second"). Round after round of a real engine: demo
 * players bet (POST /play/bets, auto cash-out out of reach) as soon as crash's betting window opens
 * on the log; once its BettingClosed is read, cash-outs of those bets are sent at a fixed pace
 * (POST /play/bets/:tx_id/cash-out, open loop) until the flight ends or the bets run out. Each
 * accepted cash-out is matched with its BetCashedOut on the log, so the request's time is set
 * against the answer, the engine's decision time (`at`) and the record's append time.
 * The first `warmUpFlights` flights with cash-outs warm the path (connections, JIT, pools) and
 * are kept apart from the figures. The CPU of the API and the engine is summed over the measured
 * flights only.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { waitFor } from '../tests/support/poll.ts';
import { cpuOf } from './edge-harness.ts';
import { bearer, type Player, paced, type Timed, timed } from './lifecycle-requests.ts';
import type { LifecycleStack } from './lifecycle-stack.ts';

export interface CashOutOptions {
  readonly ratePerS: number;
  readonly betsPerRound: number;
  /** Bets in flight while a window is open. */
  readonly betConcurrency: number;
  /** Cash-outs start this long after BettingClosed is read (the API reads the log on its own). */
  readonly startDelayMs: number;
  /**
   * Every this many cash-outs, one GET /play/round and one engine GET /health go too (the baselines
   * measured at the same moments, which on a shared machine see the same stalls); 0 = none.
   */
  readonly probeEvery: number;
  /** Flights whose cash-outs warm the path up and are not measured (the first ones with cash-outs). */
  readonly warmUpFlights: number;
  /** Stop after this many accepted (measured) cash-outs, or… */
  readonly target: number;
  /** …after this long (ms): no round is started after it (the one in progress keeps its cash-outs). */
  readonly maxMs: number;
}

/** One cash-out request and what became of it. */
export interface CashOutRecord extends Timed<{ code?: string; multiplier?: string }> {
  readonly txId: number;
  /** The flight it was sent in (1 = the first with cash-outs), and whether that one warmed up. */
  readonly flight: number;
  readonly warmUp: boolean;
  /** The decision on the log (accepted ones), as read back. */
  readonly decidedAt?: number;
  readonly appendedAt?: number;
}

/** A baseline request sent during a flight. */
export interface Probe extends Timed {
  readonly flight: number;
  readonly warmUp: boolean;
}

export interface CashOutRun {
  readonly records: CashOutRecord[];
  /** Per round: bets taken, cash-outs sent, and how long they were paced (ms). */
  readonly rounds: {
    readonly roundId: number;
    readonly warmUp: boolean;
    readonly bets: number;
    readonly cashOuts: number;
    readonly pacedMs: number;
    /** CPU-seconds per process while they were paced. */
    readonly cpuS: Record<string, number>;
  }[];
  /** The baselines sent during the flights (warm-up ones too), with their flight. */
  readonly probes: { readonly round: Probe[]; readonly health: Probe[] };
  /** Bets refused, by status and code. */
  readonly betRefusals: Record<string, number>;
  /** Seconds spent pacing measured cash-outs (flights), and CPU-seconds used then per process. */
  readonly pacedS: number;
  readonly cpuS: Record<string, number>;
}

/** Places up to `n` bets on the open round before `stopAt` (Unix ms). @returns the bets' ids and refusals. */
async function placeBets(
  stack: LifecycleStack,
  players: readonly Player[],
  n: number,
  concurrency: number,
  stopAt: number,
  refusals: Record<string, number>,
): Promise<{ txId: number; player: Player }[]> {
  const bets: { txId: number; player: Player }[] = [];
  let next = 0;
  const lane = async () => {
    while (next < n && Date.now() < stopAt) {
      const player = players[next++ % players.length] as Player;
      const r = await timed<{ tx_id: number; code?: string }>(`${stack.apiUrl}/play/bets`, bearer(player), {
        amount: 1,
        selection: { auto_cashout: '1000000' },
      });
      if (r.status === 202 && r.body) bets.push({ txId: r.body.tx_id, player });
      else {
        const key = `${r.status} ${r.body?.code ?? ''}`.trim();
        refusals[key] = (refusals[key] ?? 0) + 1;
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, lane));
  return bets;
}

/** Runs rounds until `o.target` cash-outs were accepted or `o.maxMs` passed. */
export async function runCashOuts(
  stack: LifecycleStack,
  players: readonly Player[],
  o: CashOutOptions,
): Promise<CashOutRun> {
  const { rounds } = stack;
  const pids = Object.entries(stack.pids());
  const records: CashOutRecord[] = [];
  const runRounds: CashOutRun['rounds'][number][] = [];
  const betRefusals: Record<string, number> = {};
  const cpuS: Record<string, number> = Object.fromEntries([...pids.map(([n]) => [n, 0]), ['bench', 0]]);
  let pacedMs = 0;
  let accepted = 0;
  let lastRound = 0;
  let flights = 0;
  const probes: CashOutRun['probes'] = { round: [], health: [] };
  const probeHeaders = bearer(players[0] as Player);
  const deadline = Date.now() + o.maxMs;
  while (accepted < o.target && Date.now() < deadline) {
    // A long flight may outlast the run: then the run ends with it.
    const open = await rounds
      .until(
        'a new betting window',
        (p) => p?.phase === 'betting' && p.opened.round_id > lastRound,
        deadline - Date.now(),
      )
      .catch(() => undefined);
    if (open?.phase !== 'betting') break;
    const roundId = open.opened.round_id;
    lastRound = roundId;
    // Bets stop 100 ms before the close (services/api/access/bets.ts CLOSE_GUARD_MS): stop earlier.
    const stopAt = open.opened.betting_closes_at - 300;
    const bets = await placeBets(stack, players, o.betsPerRound, o.betConcurrency, stopAt, betRefusals);
    const started = await rounds.until(
      `round ${roundId} to fly`,
      (p) => p !== undefined && !(p.phase === 'betting' && p.opened.round_id === roundId),
      120_000,
    );
    if (started?.phase !== 'running' || started.opened.round_id !== roundId) {
      runRounds.push({ roundId, warmUp: false, bets: bets.length, cashOuts: 0, pacedMs: 0, cpuS: {} });
      continue; // busted at once (1.00x)
    }
    await sleep(o.startDelayMs);
    const flight = ++flights;
    const warmUp = flight <= o.warmUpFlights;
    const flying = () => {
      const p = rounds.phase();
      return p?.phase === 'running' && p.opened.round_id === roundId;
    };
    const cpu0 = pids.map(([, pid]) => cpuOf([pid]));
    const bench0 = process.cpuUsage();
    const pending: Promise<void>[] = [];
    let sent = 0;
    const pace = await paced(
      o.ratePerS,
      () => flying() && sent < bets.length,
      (i) => {
        const bet = bets[i] as (typeof bets)[number];
        sent++;
        pending.push(
          timed<{ code?: string; multiplier?: string }>(
            `${stack.apiUrl}/play/bets/${bet.txId}/cash-out`,
            bearer(bet.player),
            {},
          ).then((r) => {
            records.push({ ...r, txId: bet.txId, flight, warmUp });
            if (r.status === 200 && !warmUp) accepted++;
          }),
        );
        if (o.probeEvery > 0 && i % o.probeEvery === 0) {
          const round = timed(`${stack.apiUrl}/play/round`, probeHeaders).then(
            (r) => void probes.round.push({ ...r, flight, warmUp }),
          );
          const health = timed(`${stack.engineUrl}/health`, {}).then(
            (r) => void probes.health.push({ ...r, flight, warmUp }),
          );
          pending.push(round, health);
        }
      },
    );
    const bench = process.cpuUsage(bench0);
    const used: Record<string, number> = Object.fromEntries([
      ...pids.map(([name, pid], k) => [name, cpuOf([pid]) - (cpu0[k] as number)] as const),
      ['bench', (bench.user + bench.system) / 1e6] as const,
    ]);
    if (!warmUp) {
      pacedMs += pace.ms;
      for (const [name, s] of Object.entries(used)) cpuS[name] = (cpuS[name] ?? 0) + s;
    }
    await Promise.all(pending);
    runRounds.push({ roundId, warmUp, bets: bets.length, cashOuts: sent, pacedMs: pace.ms, cpuS: used });
  }
  // An accepted answer comes after its record is in the log: give the reader a moment to read it.
  await waitFor(
    'every accepted cash-out on the log',
    () => (records.every((r) => r.status !== 200 || stack.rounds.cashOut(r.txId)) ? true : undefined),
    5_000,
    50,
  ).catch(() => {});
  const withLog = records.map((r): CashOutRecord => {
    const logged = stack.rounds.cashOut(r.txId);
    return logged ? { ...r, decidedAt: logged.decidedAt, appendedAt: logged.appendedAt } : r;
  });
  return { records: withLog, rounds: runRounds, probes, betRefusals, pacedS: pacedMs / 1000, cpuS };
}
