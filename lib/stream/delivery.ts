/**
 * One round on its way to subscribers: its log position and its wire forms, each built once however
 * many subscribers send it (lib/stream/hub.ts publishes it): the stream form and its JSON per
 * reported type, and, once the hub has stamped it, the position and envelope per selection.
 */
import { GAME_SLUGS, type GameSlug } from '../../rules/games/catalog.ts';
import { type RoundFinished, type StreamRound, toStreamForm } from '../../rules/rounds/round.ts';
import { roundEnvelope } from './envelope.ts';
import { formatPosition, type Position } from './position.ts';
import { reportedType, type Selection, selectionLabel, slugsOf } from './selection.ts';

/**
 * A cache key per selection that allocates nothing: the slug, the type or `all`. Game slugs and
 * type names never coincide (catalogue: crash, double, slot, wall-street; multiplier, color,
 * slots, trending), which hub.unit.test.ts checks.
 */
export function selectionKey(s: Selection): string {
  return s.kind === 'game' ? s.slug : s.kind === 'type' ? s.type : 'all';
}

/** Index of a game in GAME_SLUGS (the layout of a delivery's stamp). */
const SLOT = new Map<string, number>(GAME_SLUGS.map((g, i) => [g, i]));

/**
 * The hub's view of the log when a round was published: the latest round id and append time of
 * every game (0 when none), then the hub's origin time. Positions of live rounds come from it.
 */
export type Stamp = Float64Array;

/** The position a stamp describes for `selection`. */
export function stampPosition(stamp: Stamp, selection: Selection): Position {
  const origin = stamp[GAME_SLUGS.length * 2] as number;
  let t = Number.POSITIVE_INFINITY;
  const last = new Map<GameSlug, number>();
  for (const g of slugsOf(selection)) {
    const i = (SLOT.get(g) as number) * 2;
    const rid = stamp[i] as number;
    if (rid > 0) {
      last.set(g, rid);
      t = Math.min(t, stamp[i + 1] as number);
    } else t = Math.min(t, origin);
  }
  return { t: Number.isFinite(t) ? t : origin, last };
}

/** One round on its way to subscribers, with its log position and lazily built wire forms. */
export class Delivery {
  private readonly json = new Map<string, string>();
  private readonly forms = new Map<string, StreamRound>();
  private lives: Map<string, LiveForms> | undefined;
  private stamp: Stamp | undefined;
  /** Previous round id of this game in the log, as the hub knew it when publishing (null: none). */
  prevRoundId: number | null = null;

  constructor(
    readonly round: RoundFinished,
    /** Log append time, Unix ms (the stream form's `timestamp`). */
    readonly appendedAt: number,
    readonly partition: number,
    readonly offset: bigint,
  ) {}

  /** The stream form as seen by `selection` (built once per type). */
  streamForm(selection: Selection): StreamRound {
    const t = reportedType(selection, this.round);
    let f = this.forms.get(t);
    if (!f) {
      f = toStreamForm(this.round, this.appendedAt, t);
      this.forms.set(t, f);
    }
    return f;
  }

  /** The stream form's JSON text as seen by `selection` (serialised once per type). */
  streamJson(selection: Selection): string {
    const t = reportedType(selection, this.round);
    let s = this.json.get(t);
    if (s === undefined) {
      s = JSON.stringify(this.streamForm(selection));
      this.json.set(t, s);
    }
    return s;
  }

  /** Set by the hub when it publishes this round. */
  markPublished(stamp: Stamp, prevRoundId: number | null): void {
    this.stamp = stamp;
    this.prevRoundId = prevRoundId;
  }

  /**
   * The position of a live subscriber of `selection` once it has this round (built once per
   * selection). Every live subscriber of a selection has been given the same rounds, so they share it.
   * @throws Error for a delivery the hub has not published (a catch-up round: its subscriber tracks its own).
   */
  position(selection: Selection): string {
    const f = this.live(selection);
    f.text ??= formatPosition(selection, f.position);
    return f.text;
  }

  /**
   * {@link position} as a value, to compare with a subscriber's own (PositionTracker.equals)
   * without building text.
   * @throws Error for a delivery the hub has not published.
   */
  livePosition(selection: Selection): Position {
    return this.live(selection).position;
  }

  /** The live `round` envelope for `selection` (built once per selection). */
  envelope(selection: Selection): string {
    const f = this.live(selection);
    f.envelope ??= roundEnvelope(
      selectionLabel(selection),
      this.position(selection),
      this.streamJson(selection),
      { prev: this.prevRoundId },
    );
    return f.envelope;
  }

  /** The live forms of `selection`; a lookup that allocates nothing once they exist. */
  private live(selection: Selection): LiveForms {
    this.lives ??= new Map();
    const key = selectionKey(selection);
    let f = this.lives.get(key);
    if (!f) {
      if (!this.stamp) throw new Error('position of a round the hub has not published');
      f = { position: stampPosition(this.stamp, selection) };
      this.lives.set(key, f);
    }
    return f;
  }
}

/** What a live round is for the subscribers of one selection. */
interface LiveForms {
  readonly position: Position;
  text?: string;
  envelope?: string;
}
