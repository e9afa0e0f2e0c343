/**
 * Checks the provably-fair proof of every round of a replay, in log order, with the round
 * engine's own verification (rules/fairness/verify.ts): the revealed hash is in the
 * committed chain, and the recorded result is the one the hash gives.
 *
 * Cost: a round whose chain predecessor (or any earlier round of the same chain) passed is
 * checked against that round's hash as the chain anchor: one SHA-256 per step instead of one per
 * chain index (up to ROUND_CHAIN_LENGTH, 100,000); for consecutive rounds that check is the link
 * sha256(h_i) = h_(i-1). Only the first round of each chain in the
 * range hashes down to the commitment. A round that fails is never used as an anchor, so one
 * tampered record does not make its successors fail.
 */
import { AppError } from '../../lib/errors.ts';
import { verifyRound } from '../../rules/fairness/verify.ts';
import type { GameSlug } from '../../rules/games/catalog.ts';
import type { RoundFinished } from '../../rules/rounds/round.ts';

/** Failing rounds listed in a report; the counts stay exact beyond it. */
export const MAX_LISTED = 1000;

export interface ProofFailure {
  readonly round_id: number;
  readonly game: GameSlug;
  /**
   * Which checks failed: "chain" (the hash does not lead to the commitment, or to the last round
   * of the chain that passed), "result" (not what the revealed hash gives), or why the proof
   * could not be checked.
   */
  readonly reason: string;
  readonly partition: number;
  readonly offset: string;
}

export interface FairnessSummary {
  /** Rounds carrying a proof that were checked. */
  readonly checked: number;
  readonly passed: number;
  readonly failed: number;
  /** Rounds without a proof (appended by an external game server through POST /api/rounds). */
  readonly unproven: number;
  /** The first MAX_LISTED failures, in log order. */
  readonly failures: readonly ProofFailure[];
  /** Round ids of the first MAX_LISTED rounds without a proof. */
  readonly unproven_round_ids: readonly number[];
}

/** Where a round was read from, for the failure list. */
export interface Position {
  readonly partition: number;
  readonly offset: string;
}

/** Streaming checker: memory is one passed round per game plus the capped lists. */
export class ProofChecker {
  private readonly lastPassed = new Map<GameSlug, RoundFinished>();
  private readonly failures: ProofFailure[] = [];
  private readonly unprovenIds: number[] = [];
  private checked = 0;
  private failed = 0;
  private unproven = 0;

  /** Checks one round. @returns true (passed), false (failed) or null (no proof to check). */
  check(round: RoundFinished, at: Position): boolean | null {
    const proof = round.proof;
    if (!proof) {
      this.unproven++;
      if (this.unprovenIds.length < MAX_LISTED) this.unprovenIds.push(round.round_id);
      return null;
    }
    this.checked++;
    const last = this.lastPassed.get(round.game_slug);
    const lp = last?.proof;
    const sameChain =
      lp &&
      lp.chain_epoch === proof.chain_epoch &&
      lp.commitment === proof.commitment &&
      lp.chain_index < proof.chain_index;
    // No separate link check: with the predecessor as anchor, the chain check is that link
    // (sha256(h_i) = h_(i-1)), and each SHA-256 is a fair share of the replay's time.
    const anchor = sameChain ? { hash: lp.hash, index: lp.chain_index } : undefined;
    let reason: string | null;
    try {
      const v = verifyRound(round, undefined, anchor);
      const failedChecks = [v.chainOk ? null : 'chain', v.resultOk === false ? 'result' : null].filter(
        (x) => x !== null,
      );
      reason = v.ok ? null : failedChecks.join('+');
    } catch (err) {
      // Malformed proof fields (bad hex, index 0): the proof cannot be checked, so it fails.
      if (!(err instanceof AppError)) throw err;
      reason = err.message;
    }
    if (reason === null) {
      this.lastPassed.set(round.game_slug, round);
      return true;
    }
    this.failed++;
    if (this.failures.length < MAX_LISTED)
      this.failures.push({ round_id: round.round_id, game: round.game_slug, reason, ...at });
    return false;
  }

  summary(): FairnessSummary {
    return {
      checked: this.checked,
      passed: this.checked - this.failed,
      failed: this.failed,
      unproven: this.unproven,
      failures: [...this.failures],
      unproven_round_ids: [...this.unprovenIds],
    };
  }
}
