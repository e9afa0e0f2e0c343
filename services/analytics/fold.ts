/**
 * The pure part of the analytics replay: records in, report out. Each record is decoded, its
 * round's proof checked and the round folded into the statistics; nothing is kept per round, so
 * memory stays constant whatever the range.
 */

import { decodeRound } from '../../lib/log/rounds-codec.ts';
import type { GameSlug } from '../../rules/games/catalog.ts';
import type { RoundFinished } from '../../rules/rounds/round.ts';
import { type FairnessSummary, MAX_LISTED, ProofChecker } from './proofs.ts';
import { type GameSummaries, RoundStats, type Span } from './stats/index.ts';

export interface AnalyticsReport {
  readonly topic: string;
  /** The bounds as given, and the offsets they resolved to per partition, [from, to). */
  readonly range: {
    readonly from: string;
    readonly to: string;
    readonly partitions: readonly { partition: number; from: string; to: string }[];
  };
  /** Records read from the log. */
  readonly records: number;
  /** Rounds of the selected games (the statistics' population). */
  readonly rounds: number;
  /** Decodable rounds of games that were not selected. */
  readonly other_games: number;
  /** Records that are not a decodable RoundFinished (count exact, locations capped at MAX_LISTED). */
  readonly undecodable: {
    readonly count: number;
    readonly first: readonly { partition: number; offset: string; reason: string }[];
  };
  readonly games: GameSummaries;
  readonly spans: Partial<Record<GameSlug, Span>>;
  readonly fairness: FairnessSummary;
  /** Wall time of the whole replay (resolving, reading, folding), ms. */
  readonly elapsed_ms: number;
}

/** Where the records came from, added to the report as it is. */
export type ReplayMeta = Pick<AnalyticsReport, 'topic' | 'range' | 'elapsed_ms'>;

/** Folds records of the rounds topic, in log order per partition, into a report. */
export class ReplayFold {
  private readonly wanted: ReadonlySet<string>;
  private readonly stats: RoundStats;
  private readonly proofs = new ProofChecker();
  private readonly undecodable: { partition: number; offset: string; reason: string }[] = [];
  private undecodableCount = 0;
  private others = 0;
  private rounds = 0;
  /** Records seen so far. */
  records = 0;

  /** @param games the games reported; rounds of the others are counted and skipped. */
  constructor(games: readonly GameSlug[]) {
    this.wanted = new Set(games);
    this.stats = new RoundStats(games);
  }

  /** Decodes and folds one record (`value` as stored: framed Avro). */
  add(partition: number, offset: string, value: Buffer | null): void {
    this.records++;
    let round: RoundFinished;
    try {
      round = decodeRound(value);
    } catch (err) {
      this.undecodableCount++;
      if (this.undecodable.length < MAX_LISTED)
        this.undecodable.push({ partition, offset, reason: (err as Error).message });
      return;
    }
    if (!this.wanted.has(round.game_slug)) {
      this.others++;
      return;
    }
    this.rounds++;
    this.proofs.check(round, { partition, offset });
    this.stats.add(round);
  }

  report(meta: ReplayMeta): AnalyticsReport {
    return {
      ...meta,
      records: this.records,
      rounds: this.rounds,
      other_games: this.others,
      undecodable: { count: this.undecodableCount, first: [...this.undecodable] },
      games: this.stats.summaries(),
      spans: this.stats.spansOf(),
      fairness: this.proofs.summary(),
    };
  }
}
