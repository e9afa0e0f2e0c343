/**
 * The body shared by the single-protocol demo pages (websocket, sse, webtransport, grpc,
 * rest-api): selector, connect/disconnect, status, latency figures, the latest round, the raw
 * last message and the live list. A page calls mountDemo('<protocol>') once.
 *
 * For the browser tests it keeps `window.__received` (rounds shown), `window.__live` (rounds that
 * arrived after connecting, i.e. not an SSE `initial` event or the first REST poll) and
 * `window.__lastRound`; every list row carries data-round-id.
 */
import {
  el,
  fillSelector,
  fmtMs,
  LatencyStats,
  latencyOf,
  parseSelection,
  renderNav,
  setStatus,
} from './common.js';
import { RoundList, renderLatest } from './render.js';
import { connect, PROTOCOLS } from './transports.js';

function stat(label) {
  const box = el('div', 'stat');
  const b = el('b', '', '–');
  box.append(el('span', '', label), b);
  return { box, b };
}

function section(title, ...children) {
  const s = el('section', 'card');
  const head = el('div', 'card-head');
  head.append(el('h2', '', title));
  s.append(head, ...children);
  return s;
}

/** Builds the demo into `<main id="demo">` and connects at once unless the URL has `connect=0`. */
export function mountDemo(protocol) {
  renderNav();
  const proto = PROTOCOLS[protocol];
  const status = document.getElementById('status');
  const main = document.getElementById('demo');

  const select = el('select');
  select.id = 'selection';
  const label = el('label', '', 'Subscribe to');
  label.htmlFor = 'selection';
  const btnConnect = el('button', 'primary', 'Connect');
  btnConnect.id = 'connect';
  const btnDisconnect = el('button', '', 'Disconnect');
  btnDisconnect.id = 'disconnect';
  const address = el('code', 'address');
  const controls = el('div', 'controls');
  controls.append(label, select, btnConnect, btnDisconnect, address);

  const figures = {
    received: stat('Rounds received'),
    last: stat('Latency (last)'),
    avg: stat('Average'),
    p95: stat('p95'),
  };
  const stats = el('div', 'stats');
  stats.append(...Object.values(figures).map((f) => f.box));

  const latest = el('div', 'latest');
  latest.append(el('span', 'empty', 'Waiting for a round…'));
  const raw = el('pre', 'raw', '');
  raw.id = 'raw';
  const ol = el('ol', 'rounds');
  ol.id = 'rounds';
  const row = el('div', 'grid2');
  row.append(section('Latest round', latest), section('Last message as received', raw));
  main.append(
    section(`${proto.label} subscription`, controls, stats),
    row,
    section('Rounds, newest first', ol),
  );

  fillSelector(select);
  const list = new RoundList(ol);
  let latency = new LatencyStats();
  let handle = null;
  window.__received = 0;
  window.__live = 0;
  window.__lastRound = null;

  const showFigures = () => {
    figures.received.b.textContent = String(window.__received);
    figures.last.b.textContent = fmtMs(latency.last);
    figures.avg.b.textContent = fmtMs(latency.avg);
    figures.p95.b.textContent = fmtMs(latency.p95);
  };

  const onRound = (round, { initial, replay = false }) => {
    // Latest rounds sent on subscribe and rounds replayed after a reconnect are history: no latency.
    const ms = initial || replay ? null : latencyOf(round);
    raw.textContent = JSON.stringify(round, null, 2);
    if (!list.add(round, { initial, replay, latencyMs: ms })) return;
    if (ms !== null) latency.add(ms);
    window.__received++;
    if (!initial) window.__live++;
    window.__lastRound = round;
    latest.replaceChildren(renderLatest(round));
    showFigures();
  };

  const start = () => {
    handle?.close();
    list.clear();
    latency = new LatencyStats();
    window.__received = 0;
    window.__live = 0;
    showFigures();
    const sel = parseSelection(select.value);
    address.textContent = proto.address(sel);
    handle = connect(protocol, sel, { onRound, onState: (level, text) => setStatus(status, level, text) });
    btnDisconnect.disabled = false;
  };
  const stop = () => {
    handle?.close();
    handle = null;
    btnDisconnect.disabled = true;
  };
  btnConnect.addEventListener('click', start);
  btnDisconnect.addEventListener('click', stop);
  select.addEventListener('change', () => handle && start());
  btnDisconnect.disabled = true;
  if (new URLSearchParams(location.search).get('connect') !== '0') start();
}
