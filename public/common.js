/**
 * Shared code of the demo pages (plain ES module, no build step): the game catalogue, the
 * credential hook, the REST client, connection status, the nav bar, latency statistics and the
 * selector. Rendering of rounds is in render.js, the connections in transports.js. Every URL is relative to the page's origin, so the pages
 * work behind the gateway (one origin for pages, /api, /ws, /sse, /grpc-proxy).
 */

/** The seed's fixed catalogue (seed 000, "Known games" and "Game types"). */
export const GAMES = [
  { slug: 'crash', name: 'Crash', type: 'multiplier' },
  { slug: 'double', name: 'Double', type: 'color' },
  { slug: 'slot', name: 'Slot Machine', type: 'slots' },
  { slug: 'wall-street', name: 'Wall Street', type: 'trending' },
];
/** Type → games it delivers (seed: multiplier = crash and slot). */
export const TYPES = {
  multiplier: ['crash', 'slot'],
  color: ['double'],
  slots: ['slot'],
  trending: ['wall-street'],
};

export const PAGES = [
  ['index.html', 'Dashboard'],
  ['websocket.html', 'WebSocket'],
  ['sse.html', 'SSE'],
  ['webtransport.html', 'WebTransport'],
  ['grpc.html', 'gRPC'],
  ['rest-api.html', 'REST polling'],
  ['test.html', 'Protocol comparison'],
];

/**
 * The credential sent with every connection or request (REST X-API-Key, WebSocket subprotocol,
 * SSE/gRPC-proxy/WebTransport `token` query parameter). Access control is not enforced yet, so
 * this returns null; the access-control work replaces it with a fresh token (POST /api/auth/token)
 * per connection, which is why it is async and called on every (re)connect.
 * @param {string} _protocol 'rest' | 'websocket' | 'sse' | 'grpc' | 'webtransport'
 * @returns {Promise<string|null>}
 */
export async function getCredential(_protocol) {
  return null;
}

export function el(tag, className, text) {
  const e = document.createElement(tag);
  if (className) e.className = className;
  if (text !== undefined) e.textContent = text;
  return e;
}

/** Fills `<nav id="nav">` with links to every demo page, marking the current one. */
export function renderNav() {
  const nav = document.getElementById('nav');
  if (!nav) return;
  const here = location.pathname.split('/').pop() || 'index.html';
  nav.replaceChildren(
    ...PAGES.map(([href, label]) => {
      const a = el('a', '', label);
      a.href = href;
      if (href === here) a.setAttribute('aria-current', 'page');
      return a;
    }),
  );
}

/** Sets a `.status` pill: level is idle | ok | warn | error. */
export function setStatus(node, level, text) {
  node.dataset.level = level;
  const b = node.querySelector('b');
  if (b) b.textContent = text;
}

/* ---------- REST client with the rate-limit budget (seed: 100 requests/min per IP) ---------- */

export class ApiError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}
let pausedUntil = 0;
const LOW_BUDGET = 4;

/** Milliseconds until REST calls should resume (rate limit nearly spent or hit), else 0. */
export function restPausedFor() {
  return Math.max(0, pausedUntil - Date.now());
}

/** GET a JSON path of this origin. @throws ApiError (status 0 when unreachable). */
export async function api(path) {
  const headers = { Accept: 'application/json' };
  const cred = await getCredential('rest');
  if (cred) headers['X-API-Key'] = cred;
  let res;
  try {
    res = await fetch(path, { headers, cache: 'no-store' });
  } catch {
    throw new ApiError(0, 'API unreachable — retrying');
  }
  const rem = res.headers.get('X-Ratelimit-Remaining');
  const reset = res.headers.get('X-Ratelimit-Reset');
  if (rem !== null && reset !== null && Number(rem) <= LOW_BUDGET) {
    pausedUntil = Math.max(pausedUntil, Date.now() + Number(reset) * 1000);
  }
  if (res.status === 429) {
    pausedUntil = Math.max(pausedUntil, Date.now() + (Number(res.headers.get('Retry-After')) || 10) * 1000);
  }
  let body = null;
  try {
    body = await res.json();
  } catch {
    /* non-JSON error page */
  }
  if (!res.ok) throw new ApiError(res.status, body?.error || res.statusText || `HTTP ${res.status}`);
  return body;
}

/* ---------- latency ---------- */

/** Latency class for colouring: under 100 ms good, under 1 s mid, else bad. */
export function latencyClass(ms) {
  return ms < 100 ? 'lat-good' : ms < 1000 ? 'lat-mid' : 'lat-bad';
}
export function fmtMs(ms) {
  if (ms === null || ms === undefined || Number.isNaN(ms)) return '–';
  return ms < 10 ? `${ms.toFixed(1)} ms` : `${Math.round(ms)} ms`;
}

/** Latency of a message in ms: receive time minus its append `timestamp` (REST rows: finished_at). */
export function latencyOf(round, now = Date.now()) {
  const t = typeof round.timestamp === 'number' ? round.timestamp : Date.parse(round.finished_at);
  return Number.isFinite(t) ? Math.max(0, now - t) : null;
}

/**
 * Latency samples (ms) of live messages: last, average and 95th percentile over the newest
 * `window` samples, and the count of all samples ever added.
 */
export class LatencyStats {
  constructor(window = 500) {
    this.window = window;
    this.samples = [];
    this.count = 0;
  }
  add(ms) {
    this.samples.push(ms);
    if (this.samples.length > this.window) this.samples.shift();
    this.count++;
  }
  get last() {
    return this.samples.length ? this.samples[this.samples.length - 1] : null;
  }
  get avg() {
    return this.samples.length ? this.samples.reduce((a, b) => a + b, 0) / this.samples.length : null;
  }
  get p95() {
    if (!this.samples.length) return null;
    const sorted = [...this.samples].sort((a, b) => a - b);
    return sorted[Math.min(sorted.length - 1, Math.ceil(sorted.length * 0.95) - 1)];
  }
}

/**
 * Fills a `<select>` with the games and the types; option values are `game:<slug>` / `type:<type>`.
 * The page URL's `?game=` or `?type=` wins over `preset`.
 */
export function fillSelector(select, preset) {
  const games = el('optgroup');
  games.label = 'Game';
  for (const g of GAMES) games.append(new Option(g.name, `game:${g.slug}`));
  const types = el('optgroup');
  types.label = 'Game type';
  for (const [t, slugs] of Object.entries(TYPES))
    types.append(new Option(`${t} (${slugs.join(', ')})`, `type:${t}`));
  select.replaceChildren(games, types);
  const q = new URLSearchParams(location.search);
  const want = q.get('type') ? `type:${q.get('type')}` : q.get('game') ? `game:${q.get('game')}` : preset;
  if (want && [...select.options].some((o) => o.value === want)) select.value = want;
}

/** `game:crash` → { kind: 'game', value: 'crash' }. */
export function parseSelection(v) {
  const i = v.indexOf(':');
  return { kind: v.slice(0, i), value: v.slice(i + 1) };
}
