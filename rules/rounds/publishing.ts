/**
 * The lifecycle rules of rounds published by an external game server (docs/threat-model.md "One
 * writer per game"), as pure decisions: given the game's phase as read from the `rounds` topic
 * (lifecycle.ts evolvePhase) and the platform's clock, what may be appended.
 *
 * An external round has the lifecycle and the fairness of an engine round:
 *   1. open: the server names the game's next round id, a betting window and a commitment, the
 *      SHA-256 of a 32-byte seed it keeps secret → RoundOpened (opened at the platform's clock);
 *   2. betting closes by the platform's clock, at `betting_closes_at` → BettingClosed;
 *   3. finish: accepted only for the open round, after its window closed, with a `finished_at`
 *      within `skewMs` of the platform's clock, and a revealed seed whose SHA-256 is the commitment
 *      and from which the result follows by the game's own rules, exactly as for an engine round of
 *      chain index 1 (the seed is the round's revealed hash; rules/fairness/verify.ts verifyReveal).
 *      So `npm run verify` checks external rounds like the engine's, and the server cannot pick a
 *      result after seeing the bets.
 * Pure: no clock (`now` is an argument), no I/O.
 */
import { parseHash, sha256 } from '../fairness/chain.ts';
import { verifyReveal } from '../fairness/verify.ts';
import type { GameInfo, GameSlug } from '../games/catalog.ts';
import type { Phase } from './lifecycle.ts';
import type { BettingClosed, RoundFinished, RoundOpened, RoundResult } from './round.ts';

/** round_id = game_id × 10^12 + sequence (one id space per game). */
export const ROUND_ID_SPAN = 1e12;

/** Bounds of an external round's betting window, ms. */
export const BETTING_MS_MIN = 1000;
export const BETTING_MS_MAX = 600_000;

/** Why a publisher's request is refused; `field` names the part of the request at fault. */
export interface Refusal {
  /** 409: the request contradicts the game's lifecycle on the log; 400: the request itself is wrong. */
  readonly status: 400 | 409;
  readonly code:
    | 'ROUND_STILL_OPEN'
    | 'ROUND_NOT_NEXT'
    | 'ROUND_NOT_OPEN'
    | 'BETTING_STILL_OPEN'
    | 'FINISHED_AT_SKEW'
    | 'SEED_MISMATCH'
    | 'RESULT_MISMATCH';
  readonly field: string;
  readonly message: string;
}

export type Decision<T> =
  | { readonly ok: true; readonly value: T }
  | { readonly ok: false; readonly refusal: Refusal };

const refuse = (
  status: Refusal['status'],
  code: Refusal['code'],
  field: string,
  message: string,
): { ok: false; refusal: Refusal } => ({ ok: false, refusal: { status, code, field, message } });

/** The id the next round of `game` must carry, given its phase (the first: game_id × 10^12 + 1). */
export function nextRoundId(game: GameInfo, phase: Phase | undefined): number {
  if (phase === undefined) return game.id * ROUND_ID_SPAN + 1;
  return (phase.phase === 'finished' ? phase.roundId : phase.opened.round_id) + 1;
}

/** What an external server asks to open. */
export interface OpenRequest {
  readonly round_id: number;
  /** Length of the betting window, ms (BETTING_MS_MIN..BETTING_MS_MAX). */
  readonly betting_ms: number;
  /** SHA-256 of the round's seed, 64 lower-case hex. */
  readonly commitment: string;
}

/**
 * Opens the next round of `game` at `now` (Unix ms).
 * Refused (409) while the game has a round open, or when `round_id` is not the game's next id.
 */
export function decideOpen(
  game: GameInfo,
  phase: Phase | undefined,
  req: OpenRequest,
  now: number,
): Decision<RoundOpened> {
  if (phase && phase.phase !== 'finished')
    return refuse(
      409,
      'ROUND_STILL_OPEN',
      'round_id',
      `round ${phase.opened.round_id} of ${game.slug} is still open: finish it before opening another`,
    );
  const next = nextRoundId(game, phase);
  if (req.round_id !== next)
    return refuse(
      409,
      'ROUND_NOT_NEXT',
      'round_id',
      `round_id must be ${next}, the next round of ${game.slug}`,
    );
  return {
    ok: true,
    value: {
      type: 'RoundOpened',
      round_id: req.round_id,
      game_id: game.id,
      game_slug: game.slug,
      game_type: game.type,
      betting_opens_at: now,
      betting_closes_at: now + req.betting_ms,
      chain_epoch: 0,
      chain_index: 1,
      commitment: req.commitment,
      speed: 1,
    },
  };
}

/**
 * The BettingClosed due for `phase` at `now`: the window of the open round has ended and no
 * BettingClosed is on the log yet. Its time is the announced close, not `now`.
 */
export function dueClose(phase: Phase | undefined, now: number): BettingClosed | undefined {
  if (phase?.phase !== 'betting' || now < phase.opened.betting_closes_at) return undefined;
  const o = phase.opened;
  return {
    type: 'BettingClosed',
    round_id: o.round_id,
    game_id: o.game_id,
    game_slug: o.game_slug,
    at: o.betting_closes_at,
  };
}

/** What an external server posts to finish its open round. */
export interface FinishRequest {
  readonly round_id: number;
  /** Unix ms. */
  readonly finished_at: number;
  readonly result: RoundResult;
  /** The seed whose SHA-256 was the commitment, 64 hex. */
  readonly seed: string;
}

/**
 * Finishes the open round of `game` at `now` (Unix ms): the events to append, in order (a
 * BettingClosed first when none is on the log yet, then the RoundFinished with its proof).
 * Refused: 409 when the round is not the open one or its window is still open; 400 when
 * `finished_at` is more than `skewMs` from `now` or before the window closed, the seed does not
 * hash to the commitment, or the result is not the one the seed gives.
 */
export function decideFinish(
  game: GameInfo,
  phase: Phase | undefined,
  req: FinishRequest,
  now: number,
  skewMs: number,
): Decision<readonly (BettingClosed | RoundFinished)[]> {
  if (!phase || phase.phase === 'finished' || phase.opened.round_id !== req.round_id) {
    const open =
      phase && phase.phase !== 'finished' ? `round ${phase.opened.round_id} is open` : 'no round is open';
    return refuse(
      409,
      'ROUND_NOT_OPEN',
      'round_id',
      `round ${req.round_id} of ${game.slug} is not open (${open}): open it first`,
    );
  }
  const opened = phase.opened;
  if (now < opened.betting_closes_at)
    return refuse(
      409,
      'BETTING_STILL_OPEN',
      'round_id',
      `betting on round ${req.round_id} is open until ${new Date(opened.betting_closes_at).toISOString()}`,
    );
  if (Math.abs(req.finished_at - now) > skewMs || req.finished_at < opened.betting_closes_at)
    return refuse(
      400,
      'FINISHED_AT_SKEW',
      'finished_at',
      `finished_at must be within ${skewMs} ms of the platform's clock (${new Date(now).toISOString()}) and not before betting closed`,
    );
  let check: ReturnType<typeof verifyReveal>;
  try {
    check = verifyReveal(
      { game: game.slug, hash: req.seed, index: 1, commitment: opened.commitment },
      req.result,
    );
  } catch {
    return refuse(400, 'SEED_MISMATCH', 'seed', 'seed must be 64 hex characters');
  }
  if (!check.chainOk)
    return refuse(
      400,
      'SEED_MISMATCH',
      'seed',
      `the SHA-256 of seed is not the commitment of round ${req.round_id}`,
    );
  if (check.resultOk !== true)
    return refuse(
      400,
      'RESULT_MISMATCH',
      'result',
      `result is not the one the seed gives: ${JSON.stringify(check.result)}`,
    );
  const round: RoundFinished = {
    type: 'RoundFinished',
    round_id: req.round_id,
    game_id: game.id,
    game_slug: game.slug,
    game_type: game.type,
    finished_at: req.finished_at,
    result: check.result,
    proof: {
      hash: req.seed.toLowerCase(),
      chain_epoch: opened.chain_epoch,
      chain_index: 1,
      commitment: opened.commitment,
    },
  };
  const close = dueClose(phase, now);
  return { ok: true, value: close ? [close, round] : [round] };
}

/**
 * What an external server derives from its secret seed before opening a round: the commitment it
 * publishes (SHA-256 of the seed, lower-case hex) and the result the seed gives.
 * @throws FairnessInputError when `seedHex` is not 64 hex characters.
 */
export function sealRound(game: GameSlug, seedHex: string): { commitment: string; result: RoundResult } {
  const commitment = sha256(parseHash(seedHex, 'seed')).toString('hex');
  const { result } = verifyReveal({ game, hash: seedHex, index: 1, commitment });
  return { commitment, result };
}
