/**
 * The optional `Filter` of the gRPC streams (docs/contract.md "Streaming endpoints": min_point, max_point, colors,
 * trends). Pure code.
 *
 * A filter that is set selects (decided here; the seed and docs/architecture.md leave it open): each
 * criterion concerns some games — points the crash point and the slot multiplier, colors double,
 * trends wall-street — and a round passes when a criterion concerning its game is set and met.
 * Rounds of games no set criterion concerns do not pass. So `min_point: 2` on StreamAll delivers
 * crashes and slots from 2× only, and `colors: [red]` with `min_point: 2` delivers red doubles
 * as well. An empty filter passes everything.
 */

import { type Selection, slugsOf } from '../../../../lib/stream/hub.ts';
import type { GameSlug } from '../../../../rules/games/catalog.ts';
import type { RoundFinished } from '../../../../rules/rounds/round.ts';
import { invalidArgument } from './errors.ts';
import type { FilterMsg } from './proto.ts';

const COLORS = ['white', 'red', 'black'] as const;
const TRENDS = ['up', 'down'] as const;

/** A validated filter; `null` passes everything. */
export type RoundFilter = {
  readonly minPoint: number;
  readonly maxPoint: number;
  /** Whether a point criterion is set (a bound may be ±Infinity when only the other is given). */
  readonly point: boolean;
  readonly colors: ReadonlySet<string> | null;
  readonly trends: ReadonlySet<string> | null;
} | null;

/** The games each criterion concerns. */
const CONCERNS = {
  point: ['crash', 'slot'],
  colors: ['double'],
  trends: ['wall-street'],
} as const satisfies Record<string, readonly GameSlug[]>;

function parseBound(name: string, v: number | undefined): number | undefined {
  if (v === undefined) return undefined;
  if (!Number.isFinite(v) || v < 0) throw invalidArgument(`${name} must be a finite number ≥ 0`);
  return v;
}

function parseSet(name: string, values: readonly string[] | undefined, allowed: readonly string[]) {
  if (!values || values.length === 0) return null;
  for (const v of values) {
    if (!allowed.includes(v))
      throw invalidArgument(`${name} may hold only ${allowed.join(', ')}; got "${v}"`);
  }
  return new Set(values);
}

/**
 * Validates a request's filter for a subscription.
 * @throws RpcError INVALID_ARGUMENT for a negative or non-finite point, min_point > max_point, an
 *   unknown colour or trend, or a filter that concerns none of the games of `selection` (it would
 *   never deliver anything, e.g. colors on StreamByGame crash).
 */
export function parseFilter(msg: FilterMsg | null | undefined, selection: Selection): RoundFilter {
  const min = parseBound('min_point', msg?.min_point ?? undefined);
  const max = parseBound('max_point', msg?.max_point ?? undefined);
  if (min !== undefined && max !== undefined && min > max)
    throw invalidArgument('min_point exceeds max_point');
  const colors = parseSet('colors', msg?.colors, COLORS);
  const trends = parseSet('trends', msg?.trends, TRENDS);
  const point = min !== undefined || max !== undefined;
  if (!point && !colors && !trends) return null;

  const covered = new Set<string>(slugsOf(selection));
  const set = { point, colors: colors !== null, trends: trends !== null };
  const relevant = (Object.keys(CONCERNS) as (keyof typeof CONCERNS)[]).some(
    (k) => set[k] && CONCERNS[k].some((g) => covered.has(g)),
  );
  if (!relevant) {
    throw invalidArgument(
      `the filter concerns none of the games of this stream (${[...covered].join(', ')})`,
    );
  }
  return { minPoint: min ?? 0, maxPoint: max ?? Number.POSITIVE_INFINITY, point, colors, trends };
}

/** Whether `round` passes `filter` (see the module comment for the rule). */
export function passes(filter: RoundFilter, round: RoundFinished): boolean {
  if (filter === null) return true;
  const r = round.result;
  switch (r.game) {
    case 'crash':
    case 'slot': {
      if (!filter.point) return false;
      const p = Number(r.game === 'crash' ? r.point : r.multiplier);
      return p >= filter.minPoint && p <= filter.maxPoint;
    }
    case 'double':
      return filter.colors?.has(r.color) ?? false;
    case 'wall-street':
      return filter.trends?.has(r.trending) ?? false;
  }
}
