/**
 * The pure part of the analytics replay: records in, report out. Each record is decoded, its
 * round's proof checked and the round folded into the statistics; nothing is kept per round, so
 * memory stays constant whatever the range.
 */

import { decodeRoundEvent } from '../../lib/log/rounds-codec.ts';
import type { GameSlug } from '../../rules/games/catalog.ts';
import type { RoundEvent } from '../../rules/rounds/round.ts';
import type { ProofPipe } from './proof-pipe.ts';
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
  /**
   * Rounds whose RoundOpened is in the range and whose RoundFinished is not (yet): open at the end of
   * the range, not a failure.
   */
  readonly open_rounds: readonly { game: GameSlug; round_id: number }[];
  /** Lifecycle records (RoundOpened, BettingClosed) and cash-out decisions read. */
  readonly lifecycle_records: number;
  /** Records that are not a decodable event of the rounds topic (count exact, locations capped at MAX_LISTED). */
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
  private lifecycleRecords = 0;
  /** RoundOpened seen and not yet finished, by round id. */
  private readonly opened = new Map<number, GameSlug>();
  /** Records seen so far. */
  records = 0;

  /**
   * @param games the games reported; rounds of the others are counted and skipped.
   * @param pipe where proofs are checked when given (a worker thread: proof-pipe.ts), instead of
   *   here; `report` then takes its summary.
   */
  constructor(
    games: readonly GameSlug[],
    private readonly pipe?: ProofPipe,
  ) {
    this.wanted = new Set(games);
    this.stats = new RoundStats(games);
  }

  /**
   * Decodes and folds one record (`value` as stored: framed Avro).
   * @returns a promise to await before the next record when the proof pipe is behind.
   */
  add(partition: number, offset: string, value: Buffer | null): Promise<void> | undefined {
    this.records++;
    let round: RoundEvent;
    try {
      round = decodeRoundEvent(value);
    } catch (err) {
      this.undecodableCount++;
      if (this.undecodable.length < MAX_LISTED)
        this.undecodable.push({ partition, offset, reason: (err as Error).message });
      return;
    }
    if (round.type !== 'RoundFinished') {
      this.lifecycle(round);
      return undefined;
    }
    if (!this.wanted.has(round.game_slug)) {
      this.others++;
      return;
    }
    this.opened.delete(round.round_id);
    this.rounds++;
    this.stats.add(round);
    if (this.pipe) return this.pipe.add(value as Buffer, partition, offset);
    this.proofs.check(round, { partition, offset });
    return undefined;
  }

  /** Counts a lifecycle record and keeps the wanted rounds opened in the range. */
  private lifecycle(e: Exclude<RoundEvent, { type: 'RoundFinished' }>): void {
    this.lifecycleRecords++;
    if (e.type === 'RoundOpened' && this.wanted.has(e.game_slug)) this.opened.set(e.round_id, e.game_slug);
  }

  /** @param fairness the proof pipe's summary, when proofs were checked there. */
  report(meta: ReplayMeta, fairness: FairnessSummary = this.proofs.summary()): AnalyticsReport {
    return {
      ...meta,
      records: this.records,
      rounds: this.rounds,
      open_rounds: [...this.opened].map(([round_id, game]) => ({ game, round_id })),
      lifecycle_records: this.lifecycleRecords,
      other_games: this.others,
      undecodable: { count: this.undecodableCount, first: [...this.undecodable] },
      games: this.stats.summaries(),
      spans: this.stats.spansOf(),
      fairness,
    };
  }
}
