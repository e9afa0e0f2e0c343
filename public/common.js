/**
 * Shared code of the demo pages (plain ES module, no build step): the game catalogue, the
 * credential hook, the REST client, connection status, the nav bar, latency statistics and the
 * selector. Rendering of rounds is in render.js, the connections in transports.js. Every URL is relative to the page's origin, so the pages
 * work behind the gateway (one origin for pages, /api, /ws, /sse, /grpc-proxy).
 */

/** The seed's fixed catalogue (docs/contract.md "Games" and "Game types"). */
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
 * The credential sent with a connection or request (WebSocket subprotocol; SSE, gRPC-proxy and
 * WebTransport `token` query parameter; REST X-API-Key), as docs/contract.md "Authentication" describes
 * for browsers: a browser-bound public key from POST /api/auth/browser-key (visitor id kept in
 * localStorage, bound_domain = this page's host name), then a fresh 15 s token from
 * POST /api/auth/token for every stream connection and reconnection. REST gets the key itself, and
 * only after the API answered 401 without one (`api()` below), so anonymous REST keeps its per-IP
 * budget while AUTH_REQUIRE_API is off.
 * Returns null when the server has no auth endpoints (404) or a step fails: the connection is then
 * tried without a credential, which the edge accepts for every protocol whose switch is off.
 * @param {string} protocol 'rest' | 'websocket' | 'sse' | 'grpc' | 'webtransport'
 * @returns {Promise<string|null>}
 */
export async function getCredential(protocol) {
  const key = await browserKey();
  if (!key || protocol === 'rest') return key;
  try {
    const res = await fetch('/api/auth/token', {
      method: 'POST',
      headers: { 'X-API-Key': key },
      cache: 'no-store',
    });
    if (!res.ok) {
      // A revoked or unknown key: forget it, so the next call asks for it again.
      if (res.status === 401 || res.status === 403) keyPromise = null;
      return null;
    }
    return (await res.json()).token ?? null;
  } catch {
    return null;
  }
}

const VISITOR_STORAGE = 'casino.visitor_id';
/** @type {Promise<string|null>|null} */
let keyPromise = null;
let noAuthEndpoints = false;
/** When the API last refused this visitor a new browser key with 429: until when it says to wait, ms. */
let keyRefusedUntil = 0;

/**
 * Why this page has no credential, in words, when the API refused it a browser key for its
 * address (429: the new-key budget per IP, RATE_LIMIT_BROWSER_KEYS_PER_IP, is spent for the
 * window); '' otherwise. A stream that needs a credential is then refused (401), which alone says
 * nothing of the cause.
 * @returns {string}
 */
export function credentialProblem() {
  if (keyRefusedUntil === 0) return '';
  const min = Math.max(1, Math.ceil((keyRefusedUntil - Date.now()) / 60_000));
  return `no browser key: the server refused a new key for this address (too many new browser keys from one IP, HTTP 429); it allows another in about ${min} min`;
}

function visitorId() {
  let id = null;
  try {
    id = localStorage.getItem(VISITOR_STORAGE);
    if (!id) {
      id = crypto.randomUUID();
      localStorage.setItem(VISITOR_STORAGE, id);
    }
  } catch {
    id ??= crypto.randomUUID(); // storage disabled: a key per page load
  }
  return id;
}

/** This visitor's browser key (cached for the page's life), or null. */
function browserKey() {
  if (noAuthEndpoints) return Promise.resolve(null);
  keyPromise ??= (async () => {
    try {
      const res = await fetch('/api/auth/browser-key', {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ visitor_id: visitorId(), bound_domain: location.hostname }),
        cache: 'no-store',
      });
      if (res.status === 404) noAuthEndpoints = true;
      keyRefusedUntil =
        res.status === 429 ? Date.now() + (Number(res.headers.get('Retry-After')) || 60) * 1000 : 0;
      if (!res.ok) {
        keyPromise = null; // try again on the next connection
        return null;
      }
      return (await res.json()).key ?? null;
    } catch {
      keyPromise = null;
      return null;
    }
  })();
  return keyPromise;
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
let restNeedsCredential = false;
const LOW_BUDGET = 4;

/** Milliseconds until REST calls should resume (rate limit nearly spent or hit), else 0. */
export function restPausedFor() {
  return Math.max(0, pausedUntil - Date.now());
}

/** GET a JSON path of this origin. @throws ApiError (status 0 when unreachable). */
export async function api(path) {
  const headers = { Accept: 'application/json' };
  if (restNeedsCredential) {
    const cred = await getCredential('rest');
    if (cred) headers['X-API-Key'] = cred;
  }
  let res;
  try {
    res = await fetch(path, { headers, cache: 'no-store' });
    if (res.status === 401 && !headers['X-API-Key']) {
      // AUTH_REQUIRE_API is on: from now on send this visitor's browser key.
      restNeedsCredential = true;
      const cred = await getCredential('rest');
      if (cred) res = await fetch(path, { headers: { ...headers, 'X-API-Key': cred }, cache: 'no-store' });
    }
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
