/**
 * How the wallet benchmark's players place their bets, always inside betting windows
 * (wallet-windows.ts), with at most `maxOpen` of the scenario's bets unfinished at a time:
 * - paced: an open-loop schedule of `betsPerS` on average. At each RoundOpened the pacer takes
 *   the bets due up to the next round's expected opening (rate × elapsed time, less those already
 *   scheduled) and spreads them evenly over the window, from its opening to its lastBetAt, handing
 *   them round-robin to the players; each is sent at its time whatever the earlier ones are doing
 *   (no coordinated omission), so one player may have several bets in a round. The closed part of
 *   each cycle is made up inside the windows, so the rate over the run is the one asked for. A bet
 *   due while `maxOpen` bets are unfinished is skipped and counted: a pipeline that cannot keep up
 *   shows as a lower achieved rate, not as a queue growing for the whole run.
 * - saturated: every player bets as a player does, its next bet once the operator has answered
 *   the debit of its previous one (a player's debits are sent one after the other anyway), so
 *   the players' count is the number of bets being placed and debited at once and the pipeline
 *   always has work.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { RoundOpened } from '../rules/rounds/round.ts';
import type { Player } from '../tests/support/wallet-players.ts';
import { lastBetAt, type RoundWindows } from './wallet-windows.ts';

/** How a scenario paces its bets. */
export type Pace =
  | { readonly kind: 'paced'; readonly betsPerS: number; readonly maxOpen: number }
  | { readonly kind: 'saturated'; readonly maxOpen: number };

export interface PacingDeps {
  readonly players: readonly Player[];
  readonly windows: RoundWindows;
  /**
   * Places one bet of `player`, waiting through closed windows until `deadline` (Unix ms).
   * @returns its tx_id once the API took it, or undefined.
   */
  readonly place: (player: Player, deadline: number) => Promise<number | undefined>;
  /** Resolves once the operator has answered the debit of bet `txId` (or the bet has ended). */
  readonly debitAnswered: (txId: number) => Promise<void>;
  /** The scenario's bets placed or being placed and not finished. */
  readonly open: () => number;
}

/** How long a window may take to appear before the run gives up, ms. */
const WINDOW_TIMEOUT_MS = 30_000;

async function nextWindow(windows: RoundWindows, after: number): Promise<RoundOpened> {
  const o = await windows.next(after, WINDOW_TIMEOUT_MS);
  if (!o) throw new Error(`no round of ${windows.game} opened within ${WINDOW_TIMEOUT_MS} ms`);
  return o;
}

/**
 * Places bets for `seconds` from the next window's opening.
 * @returns when placing started and ended (Unix ms), and the paced bets skipped at the open cap;
 *   every placement has finished by then.
 * @throws Error when no round opens for WINDOW_TIMEOUT_MS.
 */
export async function runPace(
  pace: Pace,
  seconds: number,
  deps: PacingDeps,
): Promise<{ startedAt: number; endedAt: number; skipped: number }> {
  const first = await nextWindow(deps.windows, deps.windows.latest()?.round_id ?? -1);
  const startedAt = Math.max(Date.now(), first.betting_opens_at);
  const end = startedAt + seconds * 1000;
  const skipped = pace.kind === 'paced' ? await paced(pace, first, end, deps) : 0;
  if (pace.kind === 'saturated') await saturated(pace.maxOpen, end, deps);
  return { startedAt, endedAt: Math.max(end, Date.now()), skipped };
}

async function paced(
  pace: { betsPerS: number; maxOpen: number },
  first: RoundOpened,
  end: number,
  deps: PacingDeps,
): Promise<number> {
  const { players, windows } = deps;
  const t0 = first.betting_opens_at;
  const sent: Promise<unknown>[] = [];
  let skipped = 0;
  let w = first;
  // Until a second window is seen: the cycle of a window as long as this one with a result half as long.
  let cycleMs = (w.betting_closes_at - w.betting_opens_at) * 1.5;
  let scheduled = 0;
  let turn = 0;
  while (w.betting_opens_at < end) {
    const horizon = Math.min(end, w.betting_opens_at + cycleMs);
    const n = Math.max(0, Math.round((pace.betsPerS * (horizon - t0)) / 1000) - scheduled);
    const from = Math.max(Date.now(), w.betting_opens_at);
    const span = Math.max(0, lastBetAt(w) - from);
    for (let i = 0; i < n; i++) {
      const at = from + ((i + 0.5) * span) / n;
      const player = players[turn++ % players.length] as Player;
      sent.push(
        sleep(Math.max(0, at - Date.now())).then(() => {
          if (deps.open() < pace.maxOpen) return deps.place(player, end);
          skipped += 1;
          return undefined;
        }),
      );
    }
    scheduled += n;
    const next = await nextWindow(windows, w.round_id);
    cycleMs = next.betting_opens_at - w.betting_opens_at;
    w = next;
  }
  await Promise.all(sent);
  return skipped;
}

async function saturated(maxOpen: number, end: number, deps: PacingDeps): Promise<void> {
  const { windows } = deps;
  await Promise.all(
    deps.players.map(async (player) => {
      while (Date.now() < end) {
        if (deps.open() >= maxOpen) {
          await sleep(5);
          continue;
        }
        const w = windows.current(Date.now());
        if (!w) {
          await windows.next(windows.latest()?.round_id ?? -1, Math.max(1, end - Date.now()));
          continue;
        }
        const tx = await deps.place(player, end);
        if (tx !== undefined) await deps.debitAnswered(tx);
      }
    }),
  );
}
