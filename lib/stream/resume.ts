/**
 * Judging a position a subscriber asks to resume from, the same way on
 * every protocol:
 *
 * | position                                   | answer                                             |
 * |--------------------------------------------|----------------------------------------------------|
 * | none                                       | a fresh subscription                               |
 * | over 256 characters, not `t=…;slug=…`,     | `refused` (400 / INVALID_ARGUMENT / error          |
 * | a game outside the subscription            | envelope); a Last-Event-ID is ignored instead      |
 * | `t` more than a minute ahead of this edge, | a fresh live start, `recovered: false` with the    |
 * | or a round this edge has not seen within   | reason (clock skew, a log that was reset: the      |
 * | `CATCH_UP_WAIT_MS`                         | client cannot fix it, so it must not loop)         |
 * | anything else, however old                 | a resume from the log                              |
 *
 * Edges read the log independently, so a client failing over from an edge a few ms ahead names
 * rounds this one is about to publish: such a position waits up to `CATCH_UP_WAIT_MS` first.
 */
import type { GameSlug } from '../../rules/games/catalog.ts';
import type { FanOutHub, Selection } from './hub.ts';
import { type Position, type PositionFault, parsePosition } from './position.ts';

/** How long a position naming rounds this edge has not published yet waits for them, ms. */
export const CATCH_UP_WAIT_MS = 2_000;
/** Clock skew tolerated before a position's time counts as future, ms. */
export const FUTURE_TOLERANCE_MS = 60_000;
/** Log time read before `t`, ms: covers producers' clock skew for games a position does not name. */
export const LOOKBACK_MARGIN_MS = 5_000;

/** What to do with a requested position. */
export type ResumeDecision =
  | { readonly kind: 'fresh' }
  | { readonly kind: 'refused'; readonly fault: PositionFault; readonly reason: string }
  | { readonly kind: 'live'; readonly reason: string; readonly raw: string }
  | { readonly kind: 'resume'; readonly position: Position; readonly raw: string };

/** The first round `p` names that the hub has not published yet, if any. */
function unseenRound(hub: FanOutHub, p: Position): [GameSlug, number] | undefined {
  for (const [slug, rid] of p.last) {
    const known = hub.latest({ kind: 'game', slug })[0]?.round.round_id;
    if (known === undefined || rid > known) return [slug, rid];
  }
  return undefined;
}

/**
 * The decision on `raw` now, without waiting; `unseen` when the only objection is rounds the hub
 * has not published yet (worth waiting for: {@link awaitNamedRounds}).
 */
export function judgePosition(
  hub: FanOutHub,
  selection: Selection,
  raw: string | undefined,
  now: number,
): ResumeDecision & { readonly unseen?: true } {
  if (raw === undefined || raw === '') return { kind: 'fresh' };
  const parsed = parsePosition(selection, raw);
  if (!parsed.ok) return { kind: 'refused', fault: parsed.fault, reason: parsed.reason };
  const p = parsed.position;
  if (p.t > now + FUTURE_TOLERANCE_MS) return { kind: 'live', reason: 'position time in the future', raw };
  const unseen = unseenRound(hub, p);
  if (unseen)
    return {
      kind: 'live',
      reason: `round ${unseen[1]} of ${unseen[0]} not seen by this edge`,
      raw,
      unseen: true,
    };
  return { kind: 'resume', position: p, raw };
}

/**
 * Waits until the hub has published every round the position `raw` names, polling every 20 ms for
 * at most `timeoutMs` ms.
 * @returns true when they are all published (at once when it names none), false on timeout or a
 *   malformed position.
 */
export async function awaitNamedRounds(
  hub: FanOutHub,
  selection: Selection,
  raw: string | undefined,
  timeoutMs: number,
): Promise<boolean> {
  if (raw === undefined || raw === '') return true;
  const parsed = parsePosition(selection, raw);
  if (!parsed.ok) return false;
  const deadline = Date.now() + timeoutMs;
  while (unseenRound(hub, parsed.position)) {
    if (Date.now() >= deadline) return false;
    await new Promise((r) => setTimeout(r, 20));
  }
  return true;
}

/** {@link judgePosition}, after waiting up to `waitMs` for rounds the position names that are not published yet. */
export async function decideResume(
  hub: FanOutHub,
  selection: Selection,
  raw: string | undefined,
  waitMs = CATCH_UP_WAIT_MS,
): Promise<ResumeDecision> {
  const first = judgePosition(hub, selection, raw, Date.now());
  if (!('unseen' in first)) return first;
  await awaitNamedRounds(hub, selection, raw, waitMs);
  const { unseen: _unseen, ...second } = judgePosition(hub, selection, raw, Date.now());
  return second;
}
