/**
 * Betting windows for the wallet benchmark's players (a bet is taken only while its
 * round's window is open). The bench's collector reads `rounds` and feeds every RoundOpened and
 * BettingClosed here, so players know when a window is open without asking the API, and each bet
 * names its round (`round_id`), so the API answers it at once instead of the shared test helper
 * waiting for a window on its own. A bet answered 409 BETTING_CLOSED (it came too late) waits
 * until `next_round_opens_at` (or the next RoundOpened when the API cannot tell) and is sent again
 * on that round; one answered 409 ROUND_NOT_OPEN (the API has not read the RoundOpened yet) is
 * sent again 20 ms later: well-timed waits, counted apart from errors.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { RoundEvent, RoundOpened } from '../rules/rounds/round.ts';
import { CLOSE_GUARD_MS } from '../services/api/access/bets.ts';
import { type Player, placeBet } from '../tests/support/wallet-players.ts';

/**
 * The last moment the bench sends a bet in `o`'s window (Unix ms): the API's guard before the
 * announced close (bets.ts CLOSE_GUARD_MS, at most a tenth of the window), less a tenth of the
 * window (at least 5 ms) for the request's own way to the API and the append to the log.
 */
export function lastBetAt(o: RoundOpened): number {
  const w = o.betting_closes_at - o.betting_opens_at;
  return o.betting_closes_at - Math.min(CLOSE_GUARD_MS, w / 10) - Math.max(5, w / 10);
}

/** The windows of one game as the log told them. */
export class RoundWindows {
  private opened: RoundOpened | undefined;
  private closedRound = -1;
  private waiters: Array<() => void> = [];

  constructor(readonly game: string) {}

  /** Applies one event of `rounds`. */
  apply(e: RoundEvent): void {
    if (e.game_slug !== this.game) return;
    if (e.type === 'RoundOpened' && (!this.opened || e.round_id > this.opened.round_id)) {
      this.opened = e;
      for (const w of this.waiters.splice(0)) w();
    } else if (e.type === 'BettingClosed') this.closedRound = Math.max(this.closedRound, e.round_id);
  }

  /** The latest round opened (undefined before the first). */
  latest(): RoundOpened | undefined {
    return this.opened;
  }

  /** The window taking bets at `now` (before its lastBetAt and its BettingClosed), if any. */
  current(now: number): RoundOpened | undefined {
    const o = this.opened;
    return o && this.closedRound < o.round_id && now < lastBetAt(o) ? o : undefined;
  }

  /**
   * The first round opened after round `after` (at once when already known), or undefined after
   * `timeoutMs`.
   */
  async next(after: number, timeoutMs: number): Promise<RoundOpened | undefined> {
    const deadline = Date.now() + timeoutMs;
    while ((this.opened?.round_id ?? -1) <= after) {
      const left = deadline - Date.now();
      if (left <= 0) return undefined;
      await Promise.race([new Promise<void>((r) => this.waiters.push(r)), sleep(left)]);
    }
    return this.opened;
  }
}

/** What the placements of a scenario met. */
export class PlacementStats {
  /** 409 BETTING_CLOSED answers, each followed by a wait for the next window. */
  waits = 0;
  /** Bets given up because the placement time ended during their wait. */
  dropped = 0;
  errors = 0;
  firstError: string | null = null;
}

/** A bet the API took: its tx_id, when its (last) POST was sent and when the 202 came. */
export interface Accepted {
  readonly txId: number;
  readonly postAt: number;
  readonly acceptedAt: number;
}

/**
 * POSTs one bet of `player` on the round open now (or the latest one), waiting through closed
 * windows as above until `deadline` (Unix ms) has passed. Never throws: what went wrong is counted
 * in `stats`.
 * @returns the accepted bet, or undefined (an error, or dropped at the deadline).
 */
export async function placeInWindow(
  apiUrl: string,
  player: Player,
  body: Record<string, unknown>,
  windows: RoundWindows,
  stats: PlacementStats,
  deadline: number,
): Promise<Accepted | undefined> {
  for (;;) {
    const round = (windows.current(Date.now()) ?? windows.latest())?.round_id;
    const postAt = Date.now();
    let status: number;
    let answer: Record<string, unknown>;
    try {
      const r = await placeBet(apiUrl, player, { ...body, round_id: round });
      if (r.status === 202) return { txId: r.body.tx_id, postAt, acceptedAt: Date.now() };
      status = r.status;
      answer = (r.body ?? {}) as Record<string, unknown>;
    } catch (err) {
      status = 0;
      answer = { detail: (err as Error).message };
    }
    const code = status === 409 ? answer.code : undefined;
    if (code !== 'BETTING_CLOSED' && code !== 'ROUND_NOT_OPEN') {
      stats.errors += 1;
      stats.firstError ??= `POST /play/bets: HTTP ${status} ${JSON.stringify(answer).slice(0, 200)}`;
      return undefined;
    }
    stats.waits += 1;
    const opensAt = Date.parse(String(answer.next_round_opens_at ?? ''));
    const now = Date.now();
    if (code === 'ROUND_NOT_OPEN') await sleep(20);
    else {
      if (opensAt > now) await sleep(Math.min(opensAt, deadline) - now + 1);
      // Then the round that opened (at once when the collector has read it).
      await windows.next(round ?? -1, Math.max(1, Math.min(1000, deadline - Date.now())));
    }
    if (Date.now() >= deadline) {
      stats.dropped += 1;
      return undefined;
    }
  }
}
