/**
 * One way to subscribe per protocol, all with the same shape:
 *   connect(protocol, selection, { onRound(round, { initial }), onState(level, text) }) → { close() }
 * `selection` is { kind: 'game' | 'type', value }. Every connector asks getCredential() on each
 * (re)connect and reconnects with capped exponential backoff and jitter when the server goes away.
 * Paths follow seed 000 ("Streaming endpoints") and are relative to the page's origin, except
 * WebTransport, which is UDP on its own port (seed: https://{host}:4433/wt).
 */
import { api, getCredential, restPausedFor } from './common.js';
import { clock } from './render.js';

const MAX_BACKOFF_MS = 15_000;
export const REST_POLL_MS = 2_000; // seed 000 "Static files": 2-second polling interval

/** A failure that retrying cannot fix (e.g. the browser lacks the API). */
class Unsupported extends Error {}

function deliver(h, text, initial) {
  let round;
  try {
    round = JSON.parse(text);
  } catch {
    h.onState('warn', 'Received a message that is not JSON');
    return;
  }
  h.onRound(round, { initial });
}

/**
 * Runs `start(conn)` and restarts it after `conn.down(reason)` with backoff. `start` returns a
 * cleanup function; `conn.up()` resets the backoff once the connection is established.
 */
function reconnecting(h, start) {
  let closed = false;
  let attempt = 0;
  let timer = null;
  let cleanup = null;
  const run = async () => {
    let done = false;
    const conn = {
      up: () => {
        attempt = 0;
      },
      down: (why) => {
        if (done || closed) return;
        done = true;
        retry(why);
      },
    };
    try {
      const c = await start(conn);
      if (closed || done) c();
      else cleanup = c;
    } catch (err) {
      if (err instanceof Unsupported) h.onState('error', err.message);
      else conn.down(err?.message || String(err));
    }
  };
  const retry = (why) => {
    cleanup?.();
    cleanup = null;
    const ms = Math.min(MAX_BACKOFF_MS, 1000 * 2 ** attempt) * (0.75 + Math.random() * 0.5);
    attempt++;
    h.onState('error', `${why} — retrying in ${Math.ceil(ms / 1000)} s`);
    timer = setTimeout(run, ms);
  };
  run();
  return {
    close() {
      closed = true;
      clearTimeout(timer);
      cleanup?.();
      cleanup = null;
      h.onState('idle', 'Disconnected');
    },
  };
}

const seg = (sel) =>
  sel.kind === 'type' ? `type/${encodeURIComponent(sel.value)}` : encodeURIComponent(sel.value);

/** The text of a server-sent `event: error` (the gRPC proxy sends {error, code}). */
function serverError(data) {
  try {
    const e = JSON.parse(data);
    return e.code ? `${e.error} (${e.code})` : e.error || data;
  } catch {
    return data;
  }
}

/**
 * EventSource-based stream (SSE and the gRPC proxy); `events` maps event names to "initial?".
 * The browser resumes by itself after a dropped connection (Last-Event-ID header); after a refusal
 * (e.g. 502 while the edge restarts) it gives up, and the new EventSource made here carries the
 * last id as `lastEventId=` (the edge reads it when there is no header), so no round is lost.
 */
function eventStream(url, protocol, h, events) {
  let lastId = '';
  return reconnecting(h, async (conn) => {
    const cred = await getCredential(protocol);
    const q = new URLSearchParams();
    if (cred) q.set('token', cred);
    if (lastId) q.set('lastEventId', lastId);
    h.onState('warn', 'Connecting…');
    const qs = q.toString();
    const es = new EventSource(qs ? `${url}?${qs}` : url);
    es.onopen = () => {
      conn.up();
      h.onState('ok', 'Live');
    };
    for (const [name, initial] of Object.entries(events)) {
      es.addEventListener(name, (e) => {
        if (e.lastEventId) lastId = e.lastEventId;
        deliver(h, e.data, initial);
      });
    }
    es.onerror = (e) => {
      // A server-sent `event: error` carries data (the stream then ends); a connection error does not.
      if (typeof e.data === 'string' && e.data) {
        h.onState('warn', `Server error: ${serverError(e.data)}`);
        return;
      }
      if (es.readyState === EventSource.CLOSED) conn.down('Stream refused or closed');
      else h.onState('warn', 'Connection lost — reconnecting…');
    };
    return () => es.close();
  });
}

function websocket(sel, h) {
  return reconnecting(h, async (conn) => {
    const cred = await getCredential('websocket');
    h.onState('warn', 'Connecting…');
    // Seed 000: the token travels as the requested subprotocol.
    const ws = new WebSocket(`${wsScheme()}://${location.host}/ws/${seg(sel)}`, cred ? [cred] : []);
    ws.onopen = () => {
      conn.up();
      h.onState('ok', 'Live');
    };
    ws.onmessage = (e) => deliver(h, e.data, false);
    ws.onclose = (e) => conn.down(`Closed (code ${e.code}${e.reason ? `: ${e.reason}` : ''})`);
    return () => {
      ws.onclose = null;
      ws.close(1000);
    };
  });
}

/** The seed's 4433 unless the page URL has `wt_port=` (tests run the edge on a free port). */
const wtPort = () => new URLSearchParams(location.search).get('wt_port') || 4433;

function base64Bytes(b64) {
  const bin = atob(b64);
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

/**
 * WebTransport datagrams. The development certificate is self-signed and short-lived, which a
 * browser accepts only by its SHA-256 hash (serverCertificateHashes), so the hash is fetched from
 * this origin on every connect: it changes whenever the server makes a new certificate.
 */
function webtransport(sel, h) {
  return reconnecting(h, async (conn) => {
    if (typeof WebTransport === 'undefined') {
      throw new Unsupported(
        'WebTransport is not available: it needs a recent Chromium or Firefox and a secure context (https or localhost)',
      );
    }
    h.onState('warn', 'Fetching certificate hash…');
    const res = await fetch('/webtransport/cert-hash', { cache: 'no-store' });
    if (!res.ok) throw new Error(`Certificate hash unavailable (HTTP ${res.status})`);
    const info = await res.json();
    const cred = await getCredential('webtransport');
    const q = new URLSearchParams({ [sel.kind]: sel.value });
    if (cred) q.set('token', cred);
    h.onState('warn', 'Connecting…');
    const t = new WebTransport(`https://${location.hostname}:${wtPort()}/wt?${q}`, {
      serverCertificateHashes: [{ algorithm: info.algorithm || 'sha-256', value: base64Bytes(info.hash) }],
    });
    t.closed.then(
      (i) => conn.down(`Closed${i?.reason ? `: ${i.reason}` : ''}`),
      (e) => conn.down(`Connection failed: ${e?.message || e}`),
    );
    await t.ready;
    conn.up();
    h.onState('ok', 'Live');
    (async () => {
      const reader = t.datagrams.readable.getReader();
      const dec = new TextDecoder();
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return;
        deliver(h, dec.decode(value), false);
      }
    })().catch(() => {}); // the closed promise reports why
    return () => t.close();
  });
}

/** REST polling of the history (one request per poll whatever the selection, no round missed). */
function rest(sel, h) {
  const path = `/api/history/${seg(sel)}?limit=20`;
  let closed = false;
  let first = true;
  let timer = null;
  let seen = new Set();
  const tick = async () => {
    if (closed) return;
    const wait = restPausedFor();
    if (wait > 0) {
      h.onState('warn', `Rate limit nearly spent — resuming in ${Math.ceil(wait / 1000)} s`);
      timer = setTimeout(tick, Math.min(wait, 1000));
      return;
    }
    const started = Date.now();
    try {
      const rows = await api(path);
      if (closed) return;
      const keys = new Set();
      for (const r of rows.slice().reverse()) {
        const key = `${r.game_slug}:${r.round_id}`;
        keys.add(key);
        if (!seen.has(key)) h.onRound(r, { initial: first });
      }
      seen = keys;
      first = false;
      h.onState(
        'ok',
        `Polling every ${REST_POLL_MS / 1000} s · last poll ${clock(new Date().toISOString())}`,
      );
    } catch (e) {
      h.onState(e.status === 429 ? 'warn' : 'error', e.message);
    }
    if (!closed) timer = setTimeout(tick, Math.max(0, started + REST_POLL_MS - Date.now()));
  };
  h.onState('warn', 'Polling…');
  tick();
  return {
    close() {
      closed = true;
      clearTimeout(timer);
      h.onState('idle', 'Disconnected');
    },
  };
}

const wsScheme = () => (location.protocol === 'https:' ? 'wss' : 'ws');

/** Per protocol: label, the address shown to the user, and the connector. */
export const PROTOCOLS = {
  websocket: {
    label: 'WebSocket',
    address: (sel) => `${wsScheme()}://${location.host}/ws/${seg(sel)}`,
    open: websocket,
  },
  sse: {
    label: 'SSE',
    address: (sel) => `GET /sse/${seg(sel)}`,
    open: (sel, h) => eventStream(`/sse/${seg(sel)}`, 'sse', h, { initial: true, message: false }),
  },
  webtransport: {
    label: 'WebTransport',
    address: (sel) =>
      `https://${location.hostname}:${wtPort()}/wt?${sel.kind}=${encodeURIComponent(sel.value)}`,
    open: webtransport,
  },
  grpc: {
    label: 'gRPC (proxy)',
    address: (sel) =>
      `GET /grpc-proxy/stream/${seg(sel)} → DataStream.${sel.kind === 'type' ? 'StreamByType' : 'StreamByGame'}`,
    open: (sel, h) => eventStream(`/grpc-proxy/stream/${seg(sel)}`, 'grpc', h, { message: false }),
  },
  rest: {
    label: 'REST polling',
    address: (sel) => `GET /api/history/${seg(sel)}?limit=20 every ${REST_POLL_MS / 1000} s`,
    open: rest,
  },
};

/** Opens a subscription; see the module comment. @throws Error for an unknown protocol. */
export function connect(protocol, sel, handlers) {
  const p = PROTOCOLS[protocol];
  if (!p) throw new Error(`unknown protocol ${protocol}`);
  return p.open(sel, handlers);
}
