/**
 * Rendering of rounds shared by the demo pages: formatting, the per-game views (a big one for the
 * latest round, a small one for strips and lists) and the live round list. Works on both forms of
 * a round (docs/contract.md): REST rows carry `value`, stream messages carry `extras`.
 */
import { el, fmtMs, GAMES, latencyClass } from './common.js';

/* ---------- formatting ---------- */

export function crashClass(v) {
  const x = Number(v);
  if (x < 1.5) return 'c-low';
  if (x < 2) return 'c-mid';
  if (x < 10) return 'c-good';
  if (x < 100) return 'c-high';
  return 'c-moon';
}
export function clock(iso) {
  return new Date(iso).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit', second: '2-digit' });
}
export function ago(iso) {
  const s = Math.max(0, Math.round((Date.now() - Date.parse(iso)) / 1000));
  if (s < 60) return `${s} s ago`;
  if (s < 3600) return `${Math.floor(s / 60)} min ago`;
  return `${Math.floor(s / 3600)} h ago`;
}
export function parseExtras(round) {
  if (!round || typeof round.extras !== 'string') return {};
  try {
    return JSON.parse(round.extras) ?? {};
  } catch {
    return {};
  }
}
/** The seed's `value` of a round in either form (REST rows carry it; stream messages carry extras). */
export function roundValue(round) {
  if (typeof round.value === 'string') return round.value;
  const x = parseExtras(round);
  const v = { crash: x.point, double: x.color, slot: x.multiplier, 'wall-street': x.trending }[
    round.game_slug
  ];
  return v === undefined ? '?' : String(v);
}
export function gameName(slug) {
  return GAMES.find((g) => g.slug === slug)?.name ?? slug;
}

/* ---------- per-game renderers: latest (big) and one history item (small) ---------- */

const SYMBOL = { cherry: '🍒', lemon: '🍋', bell: '🔔', diamond: '💎' };
function symbolEl(name) {
  const cell = el('div', 'reel');
  cell.title = name;
  if (name === 'bar') cell.append(el('span', 'bar', 'BAR'));
  else if (name === 'seven') cell.append(el('span', 'seven', '7'));
  else cell.textContent = SYMBOL[name] || name;
  return cell;
}
const slotClass = (v) => (Number(v) > 0 ? crashClass(Math.max(Number(v), 2)) : 'zero');
const RENDER = {
  crash: {
    latest(r) {
      const p = el('div', `point ${crashClass(r.value)}`, r.value);
      p.append(el('small', '', '×'));
      return p;
    },
    item: (r) => el('span', `pill ${crashClass(r.value)}`, `${r.value}×`),
  },
  double: {
    latest(r, x) {
      const wrap = el('div', 'trend');
      wrap.append(el('div', `chip ${r.value}`, x.number === undefined ? '' : String(x.number)));
      wrap.append(el('div', 'chip-label', r.value));
      return wrap;
    },
    item(r) {
      const m = el('span', `mini ${r.value}`);
      m.title = r.value;
      return m;
    },
  },
  slot: {
    latest(r, x) {
      const wrap = el('div', 'reels');
      for (const s of x.reels || []) wrap.append(symbolEl(s));
      wrap.append(el('div', `win ${Number(r.value) > 0 ? slotClass(r.value) : 'empty'}`, `${r.value}×`));
      return wrap;
    },
    item: (r) => el('span', `pill ${slotClass(r.value)}`, `${r.value}×`),
  },
  'wall-street': {
    latest(r) {
      const wrap = el('div', 'trend');
      wrap.append(el('div', `arrow ${r.value}`, r.value === 'up' ? '▲' : '▼'));
      wrap.append(el('div', `trend-word ${r.value}`, r.value));
      return wrap;
    },
    item: (r) => el('span', `tick ${r.value}`, r.value === 'up' ? '▲' : '▼'),
  },
};
const GENERIC = { latest: (r) => el('div', 'point', r.value), item: (r) => el('span', 'pill', r.value) };

/** Big view of a round (REST or stream form). */
export function renderLatest(round) {
  const r = { ...round, value: roundValue(round) };
  return (RENDER[round.game_slug] || GENERIC).latest(r, parseExtras(round));
}
/** Small view of a round, for strips and lists. */
export function renderItem(round) {
  const r = { ...round, value: roundValue(round) };
  return (RENDER[round.game_slug] || GENERIC).item(r);
}

/**
 * A live list of rounds, newest first, without duplicates (game slug + round id), capped at
 * `max` rows. Each row carries data-round-id and data-game (the browser tests look for them).
 */
export class RoundList {
  constructor(ol, max = 60) {
    this.ol = ol;
    this.max = max;
    this.seen = new Set();
  }
  /** @returns false when the round was already listed. */
  add(round, { initial = false, replay = false, latencyMs = null } = {}) {
    const key = `${round.game_slug}:${round.round_id}`;
    if (this.seen.has(key)) return false;
    this.seen.add(key);
    const li = el('li', 'round');
    li.dataset.roundId = String(round.round_id);
    li.dataset.game = round.game_slug;
    li.dataset.initial = String(initial);
    const what = el('span', 'what');
    what.append(renderItem(round), ' ', el('span', 'extras', round.extras ?? ''));
    const lat = el(
      'span',
      `lat ${latencyMs === null ? '' : latencyClass(latencyMs)}`,
      initial ? 'initial' : replay ? 'replayed' : fmtMs(latencyMs),
    );
    li.append(
      el('span', 'badge', gameName(round.game_slug)),
      what,
      el('span', 'rid', `#${round.round_id}`),
      el('span', 'time', clock(round.finished_at)),
      lat,
    );
    this.ol.prepend(li);
    while (this.ol.children.length > this.max) {
      const last = this.ol.lastElementChild;
      this.seen.delete(`${last.dataset.game}:${last.dataset.roundId}`);
      last.remove();
    }
    return true;
  }
  clear() {
    this.ol.replaceChildren();
    this.seen.clear();
  }
}
