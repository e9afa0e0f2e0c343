/**
 * The newest rounds of each game, kept in memory by every edge so that the usual resume (a client
 * whose connection dropped or whose edge went away seconds ago) needs no log read at all.
 */
import type { GameSlug } from '../../rules/games/catalog.ts';
import type { Delivery, Selection, Subscription } from './hub.ts';
import type { Position } from './position.ts';
import { slugsOf } from './selection.ts';

/** Rounds kept per game in memory for resumes (about 4 games x 1000 x 1 KB). */
export const RECENT_PER_GAME = 1000;

/** The newest `RECENT_PER_GAME` rounds of each game, oldest first; subscribe it to the hub as `all`. */
export class RecentRounds implements Subscription {
  readonly selection: Selection = { kind: 'all' };
  private readonly byGame = new Map<GameSlug, Delivery[]>();

  deliver(d: Delivery): void {
    let list = this.byGame.get(d.round.game_slug);
    if (!list) {
      list = [];
      this.byGame.set(d.round.game_slug, list);
    }
    list.push(d);
    if (list.length > RECENT_PER_GAME * 1.25) list.splice(0, list.length - RECENT_PER_GAME);
  }

  /**
   * The rounds of `selection` after `p` in append order, or undefined when memory does not reach
   * back far enough (a game without a position, or one whose last round is older than memory).
   */
  since(selection: Selection, p: Position): Delivery[] | undefined {
    const out: Delivery[] = [];
    for (const slug of slugsOf(selection)) {
      const last = p.last.get(slug);
      const list = this.byGame.get(slug) ?? [];
      if (last === undefined || !list[0] || list[0].round.round_id > last) return undefined;
      for (const d of list) if (d.round.round_id > last) out.push(d);
    }
    return out.sort((a, b) => a.appendedAt - b.appendedAt);
  }
}
