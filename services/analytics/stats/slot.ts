/**
 * Slot statistics: empirical return to player (RTP) against the paytable's exact RTP
 * (rules/games/slot.ts, 31615/32768 ≈ 96.48%), its standard error from the
 * paytable's variance, and how often each payout hit against its exact probability.
 */
import { exactRtp, payoutDistribution } from '../../../rules/games/slot.ts';
import { type ChiSquare, chiSquare } from './fit.ts';

const MULTIPLIER = /^(\d{1,12})\.(\d{2})$/;

/** Multiplier in hundredths ("17.00" → 1700), or null when malformed. */
export function parseHundredths(multiplier: string): number | null {
  const m = MULTIPLIER.exec(multiplier);
  return m ? Number(m[1]) * 100 + Number(m[2]) : null;
}

export interface SlotSummary {
  readonly game: 'slot';
  readonly rounds: number;
  /** Records whose multiplier is not a two-place decimal. */
  readonly invalid: number;
  /** Σ multipliers / rounds: what a unit stake on every round returned. */
  readonly rtp: number;
  /** The paytable's exact RTP. */
  readonly theoretical_rtp: number;
  /** Standard error of `rtp` under the paytable (σ / √rounds). */
  readonly std_error: number;
  /** (rtp − theoretical_rtp) / std_error. */
  readonly z: number;
  /**
   * Per payout (highest first): hits, share, exact probability and its part of the RTP, observed
   * (multiplier · share) and in theory. Payouts the paytable cannot produce are listed with
   * probability 0.
   */
  readonly payouts: readonly {
    multiplier: string;
    count: number;
    share: number;
    theoretical: number;
    rtp_share: number;
    theoretical_rtp_share: number;
  }[];
  /** Goodness of fit of the payout counts (low_expected is usual below ~160,000 rounds: the top prize is 1/32768). */
  readonly payout_fit: ChiSquare | null;
}

/** Accumulates slot payouts; memory: one count per distinct multiplier (8 on the paytable). */
export class SlotStats {
  private readonly hits = new Map<number, number>();
  private n = 0;
  private bad = 0;
  private sum = 0;

  add(multiplier: string): void {
    const h = parseHundredths(multiplier);
    if (h === null) {
      this.bad++;
      return;
    }
    this.n++;
    this.sum += h;
    this.hits.set(h, (this.hits.get(h) ?? 0) + 1);
  }

  summary(): SlotSummary {
    const theory = payoutDistribution();
    const rtp0 = exactRtp();
    let variance = 0;
    for (const [pay, p] of theory) variance += p * (pay / 100) ** 2;
    variance -= rtp0 ** 2;
    const n = this.n;
    const rtp = n === 0 ? 0 : this.sum / 100 / n;
    const std_error = n === 0 ? 0 : Math.sqrt(variance / n);
    const keys = [...new Set([...theory.keys(), ...this.hits.keys()])].sort((a, b) => b - a);
    const payouts = keys.map((h) => {
      const count = this.hits.get(h) ?? 0;
      const share = n === 0 ? 0 : count / n;
      const theoretical = theory.get(h) ?? 0;
      return {
        multiplier: (h / 100).toFixed(2),
        count,
        share,
        theoretical,
        rtp_share: (h / 100) * share,
        theoretical_rtp_share: (h / 100) * theoretical,
      };
    });
    return {
      game: 'slot',
      rounds: n,
      invalid: this.bad,
      rtp,
      theoretical_rtp: rtp0,
      std_error,
      z: std_error === 0 ? 0 : (rtp - rtp0) / std_error,
      payouts,
      payout_fit: chiSquare(
        payouts.map((p) => p.count),
        payouts.map((p) => p.theoretical),
      ),
    };
  }
}
