/**
 * One way to subscribe per protocol, all with the same shape:
 *   connect(protocol, selection, { onRound(round, { initial }), onState(level, text), onLifecycle? })
 *     → { close() }
 * `selection` is { kind: 'game' | 'type' | 'all', value }. WebSocket, SSE, WebTransport and gRPC
 * (through the edge's proxy) go through the platform's stream client (vendor/rounds-client.js,
 * built from packages/client): a fresh credential per connection (getCredential), reconnection
 * with backoff and jitter, and a resume from the last position, so no round is lost or shown twice
 * across reconnects and edge restarts. REST polling is the page's own.
 * Paths follow docs/contract.md ("Streaming endpoints") and are relative to the page's origin, except
 * WebTransport, which is UDP on its own port (seed: https://{host}:4433/wt).
 */
import { api, credentialProblem, getCredential, restPausedFor } from './common.js';
import { clock } from './render.js';
import {
  certificateHashesFrom,
  createRoundsClient,
  sseTransport,
  websocketTransport,
  webTransport,
} from './vendor/rounds-client.js';

export const REST_POLL_MS = 2_000; // docs/contract.md "Static files": 2-second polling interval

const seg = (sel) =>
  sel.kind === 'type' ? `type/${encodeURIComponent(sel.value)}` : encodeURIComponent(sel.value);

/** The client's selection of a page selection. */
const selectionOf = (sel) =>
  sel.kind === 'all' ? { all: true } : sel.kind === 'type' ? { type: sel.value } : { game: sel.value };

/** The seed's 4433 unless the page URL has `wt_port=` (tests run the edge on a free port). */
const wtPort = () => new URLSearchParams(location.search).get('wt_port') || 4433;

/** What the status pill says about a connection that ended, per protocol. */
function endedText(protocol, reason) {
  if (protocol === 'websocket') return reason.replace(/^closed/, 'Closed');
  if (protocol === 'webtransport') return reason.replace(/^closed/, 'Closed');
  return `Stream refused or closed (${reason})`;
}

/** `text`, followed by why the page has no credential when the API refused it a browser key. */
function withCause(text) {
  const why = credentialProblem();
  return why ? `${text} — ${why}` : text;
}

/**
 * A subscription through the stream client. `latest` asks for the latest round of each game first
 * (SSE always sends its `initial`); `onLifecycle` turns lifecycle messages on.
 */
function streamed(protocol, transport, sel, h, { latest = false } = {}) {
  const client = createRoundsClient({
    baseUrl: location.origin,
    transport,
    credentials: { getCredential: () => getCredential(protocol).then((c) => c ?? undefined) },
  });
  let closedByPage = false;
  client.onState((s) => {
    if (s.state === 'open') h.onState('ok', 'Live');
    else if (s.state === 'connecting') h.onState('warn', 'Connecting…');
    else if (s.state === 'reconnecting')
      h.onState(
        'error',
        withCause(
          `${endedText(protocol, s.reason ?? 'closed')} — retrying in ${Math.ceil(s.delayMs / 1000)} s`,
        ),
      );
    else if (!closedByPage) h.onState('error', withCause(s.reason ?? 'Closed'));
  });
  h.onState('warn', 'Connecting…');
  client.subscribe(selectionOf(sel), {
    latest,
    lifecycle: typeof h.onLifecycle === 'function',
    onRound: (round, meta) => h.onRound(round, { initial: meta.initial, replay: meta.replay }),
    onLifecycle: (m) => h.onLifecycle?.(m),
    onRecovered: (info) => h.onRecovered?.(info),
    onError: (e) => h.onState('error', withCause(`Refused: ${e.error} (${e.status})`)),
  });
  return {
    close() {
      closedByPage = true;
      client.close();
      h.onState('idle', 'Disconnected');
    },
  };
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

/**
 * WebTransport needs a secure context and a recent browser; the development certificate is
 * self-signed and short-lived, which a browser accepts only by its SHA-256 hash, fetched from this
 * origin on every connect (it changes whenever the server makes a new certificate).
 */
function webtransport(sel, h) {
  if (typeof WebTransport === 'undefined') {
    h.onState(
      'error',
      'WebTransport is not available: it needs a recent Chromium or Firefox and a secure context (https or localhost)',
    );
    return { close: () => h.onState('idle', 'Disconnected') };
  }
  const transport = webTransport({
    url: () => `https://${location.hostname}:${wtPort()}/wt`,
    certificateHashes: certificateHashesFrom('/webtransport/cert-hash'),
  });
  return streamed('webtransport', transport, sel, h, { latest: true });
}

/** Per protocol: label, the address shown to the user, and the connector. */
export const PROTOCOLS = {
  websocket: {
    label: 'WebSocket',
    address: (sel) => `${wsScheme()}://${location.host}/ws/?envelope=1 (subscribe ${sel.kind}:${sel.value})`,
    open: (sel, h) => streamed('websocket', websocketTransport(), sel, h, { latest: true }),
  },
  sse: {
    label: 'SSE',
    address: (sel) => `GET /sse/${seg(sel)}`,
    open: (sel, h) => streamed('sse', sseTransport(), sel, h),
  },
  webtransport: {
    label: 'WebTransport',
    address: (sel) =>
      `https://${location.hostname}:${wtPort()}/wt?envelope=1 (subscribe ${sel.kind}:${sel.value})`,
    open: webtransport,
  },
  grpc: {
    label: 'gRPC (proxy)',
    address: (sel) => `GET /grpc-proxy/stream/${seg(sel)} → DataStream.StreamRoundEvents`,
    open: (sel, h) =>
      streamed('grpc', sseTransport({ path: '/grpc-proxy/stream' }), sel, h, { latest: true }),
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
