/**
 * Player game page: opens the session with the one-time launch code of the game URL
 * (POST /play/open; a second open of the URL is refused with 410), shows the balance (GET
 * /play/balance: the operator's Balance callback, or the virtual balance of a demo session), the
 * last results over SSE, the current round from GET /play/round (betting countdown; for crash the
 * live flight drawn from its start and the public formula m(t) = e^(0.00006 · speed · ms), and a
 * Cash out button decided by the server: POST /play/bets/:tx/cash-out), and places bets
 * (POST /play/bets) only while betting is open, following each one (GET /play/bets/:tx) until it
 * is settled, rejected or cancelled.
 */
import { el, setStatus } from '../common.js';
import { roundValue } from '../render.js';
import { connect } from '../transports.js';

const $ = (id) => document.getElementById(id);
const status = $('status');
const STORE = 'casino.play';
const POLL_MS = 1000;
const ROUND_POLL_MS = 400;
let token = null;
let session = null;
/** The last GET /play/round, and the server clock minus ours (ms). */
let current = null;
let clockOffset = 0;
/** The round the cash-out line speaks of; a new round clears it. */
let cashOutRound = null;
const serverNow = () => Date.now() + clockOffset;
/** Digits after the point of the session's currency, read off the balance the server formats (2 until then). */
let decimals = 2;

/** Problem JSON (RFC 7807) or any JSON error to one line, with the problem's `code` when present. */
async function problemOf(res) {
  try {
    const b = await res.json();
    return {
      message: b.detail || b.title || b.error?.message || b.error || `HTTP ${res.status}`,
      code: typeof b.code === 'string' ? b.code : undefined,
    };
  } catch {
    return { message: `HTTP ${res.status}`, code: undefined };
  }
}

/** What the page says when the game URL cannot be opened, by the problem's code (services/api/access/play.ts). */
const OPEN_REFUSED = {
  LAUNCH_USED: [
    'Link already used',
    'This game link was already used; it works once. Ask your operator for a new one.',
  ],
  LAUNCH_EXPIRED: ['Link expired', 'This game link has expired. Ask your operator for a new one.'],
  LAUNCH_NOT_FOUND: ['Unknown link', 'This game link is not valid. Ask your operator for a new one.'],
};

async function call(method, path, body) {
  const res = await fetch(path, {
    method,
    headers: {
      ...(token ? { Authorization: `Bearer ${token}` } : {}),
      ...(body ? { 'Content-Type': 'application/json' } : {}),
    },
    body: body ? JSON.stringify(body) : undefined,
    cache: 'no-store',
  });
  if (!res.ok) {
    const p = await problemOf(res);
    throw Object.assign(new Error(p.message), { status: res.status, code: p.code });
  }
  return res.status === 204 ? null : res.json();
}

/** The player session of this tab: from sessionStorage (a reload), else by consuming the launch code. */
async function open() {
  const launch = new URLSearchParams(location.search).get('launch');
  const saved = JSON.parse(sessionStorage.getItem(STORE) || 'null');
  if (saved && (!launch || saved.launch === launch)) return saved;
  if (!launch) throw new Error('This page is opened through a game URL from your operator.');
  const opened = await call('POST', '/play/open', { launch });
  const state = { launch, token: opened.player_token, session: opened.session };
  sessionStorage.setItem(STORE, JSON.stringify(state));
  history.replaceState(null, '', location.pathname); // the code is spent: keep it out of the bar
  return state;
}

async function refreshBalance() {
  try {
    const b = await call('GET', '/play/balance');
    $('balance').textContent = `${b.balance} ${b.currency}`;
    // "1250" JPY, "12.50" USD, "0.00000001" BTC: the stake takes the same precision.
    decimals = b.balance.split('.')[1]?.length ?? 0;
    const step = decimals === 0 ? '1' : `0.${'0'.repeat(decimals - 1)}1`;
    Object.assign($('amount'), { step, min: step });
  } catch (err) {
    $('balance').textContent = `unavailable (${err.message})`;
  }
}

const SELECTIONS = {
  crash: () =>
    `<label>Auto cash-out <input id="sel" type="number" min="1.01" step="0.01" value="2.00" required></label>`,
  double: () =>
    '<label>Colour <select id="sel"><option>red</option><option>black</option><option>white</option></select></label>',
  slot: () => '<span>One spin</span>',
  'wall-street': () =>
    '<label>Trend <select id="sel"><option>up</option><option>down</option></select></label>',
};

function selection() {
  const v = $('sel')?.value;
  switch (session.game) {
    case 'crash':
      return { auto_cashout: Number(v).toFixed(2) };
    case 'double':
      return { color: v };
    case 'wall-street':
      return { trend: v };
    default:
      return {};
  }
}

function betRow(txId, roundId, amount) {
  const tr = el('tr');
  tr.dataset.tx = String(txId);
  for (const text of [String(txId), String(roundId), amount, 'pending', '']) tr.append(el('td', '', text));
  $('bets').prepend(tr);
  return tr;
}

/** Follows a bet until its row is final; updates the table and the balance. */
async function follow(txId, tr) {
  for (;;) {
    await new Promise((r) => setTimeout(r, POLL_MS));
    let rows;
    try {
      rows = (await call('GET', `/play/bets/${txId}`)).transactions ?? [];
    } catch (err) {
      if (err.status === 404) continue; // not projected yet
      tr.cells[3].textContent = err.message;
      return;
    }
    const bet = rows.find((r) => r.kind === 'bet') ?? rows[0];
    if (!bet) continue;
    const st = bet.status;
    const round = bet.round_status;
    const win = rows.find((r) => r.kind === 'win');
    tr.cells[3].textContent = st;
    tr.cells[4].textContent = round === 'won' && win ? `won ${win.amount}` : round;
    tr.className = round;
    if (st === 'rejected' || round === 'lost' || round === 'cancelled' || (round === 'won' && win)) {
      await refreshBalance();
      if (round !== 'won' || win.status === 'succeeded' || session.demo) return;
    }
  }
}

async function placeBet(ev) {
  ev.preventDefault();
  $('bet-error').textContent = '';
  const amount = Number($('amount').value);
  const body = { amount, selection: selection(), ...($('free').checked ? { free: true } : {}) };
  if (current?.phase === 'betting') body.round_id = String(current.round_id);
  try {
    const placed = await call('POST', '/play/bets', body);
    const tr = betRow(placed.tx_id, placed.round_id, placed.amount.toFixed(decimals));
    await refreshBalance();
    void follow(placed.tx_id, tr);
  } catch (err) {
    $('bet-error').textContent = err.message;
  }
}

function showLive() {
  connect(
    'sse',
    { kind: 'game', value: session.game },
    {
      onState: (level, text) => setStatus(status, level, text),
      onRound: (round) => {
        $('last-result').textContent = roundValue(round);
        $('last-round').textContent = String(round.round_id);
      },
    },
  );
}

/** The crash flight's multiplier at server time `now`: floor(100 e^(0.00006 · speed · ms)) / 100. */
function multiplierAt(now) {
  const ms = Math.max(0, now - Date.parse(current.running_since)) * current.speed;
  return Math.floor(100 * Math.exp(0.00006 * ms) + 1e-9) / 100;
}

/** Bets of this round that can still be cashed out by hand. */
const cashable = () => (current?.bets ?? []).filter((b) => b.cash_out === null);

/** Phase, countdown and flight, redrawn every frame from the last /play/round. */
function frame() {
  const c = current;
  if (c) {
    $('round-id').textContent = c.round_id === null ? '–' : String(c.round_id);
    if (c.round_id !== null && cashOutRound !== null && c.round_id !== cashOutRound) {
      $('cash-out-result').textContent = '';
      cashOutRound = null;
    }
    const now = serverNow();
    if (c.phase === 'betting') {
      const left = Math.max(0, Date.parse(c.betting_closes_at) - now) / 1000;
      $('phase').textContent = 'Betting open';
      $('countdown').textContent = `closes in ${left.toFixed(1)} s`;
      $('flight').textContent = '';
    } else if (c.phase === 'running') {
      $('phase').textContent = session.game === 'crash' ? 'Flying' : 'Drawing';
      $('countdown').textContent = c.next_round_opens_at
        ? `next round in ${Math.max(0, (Date.parse(c.next_round_opens_at) - now) / 1000).toFixed(1)} s`
        : 'betting is closed';
      if (session.game === 'crash') $('flight').textContent = `${multiplierAt(now).toFixed(2)}x`;
    } else {
      $('phase').textContent = 'Round over';
      $('countdown').textContent = 'next round opening…';
    }
    $('place').disabled = c.phase !== 'betting';
    $('cash-out').hidden = !(session.game === 'crash' && c.phase === 'running' && cashable().length > 0);
  }
  requestAnimationFrame(frame);
}

async function pollRound() {
  for (;;) {
    try {
      const r = await call('GET', '/play/round');
      clockOffset = r.server_time - Date.now();
      current = r;
    } catch {
      // keep the last state; the next poll retries
    }
    await new Promise((r) => setTimeout(r, ROUND_POLL_MS));
  }
}

async function cashOut() {
  $('cash-out').disabled = true;
  $('cash-out-result').textContent = '';
  cashOutRound = current?.round_id ?? null;
  for (const b of cashable()) {
    try {
      const r = await call('POST', `/play/bets/${b.tx_id}/cash-out`);
      b.cash_out = 'accepted';
      $('cash-out-result').textContent = `Cashed out at ${r.multiplier}x · +${r.payout.toFixed(2)}`;
    } catch (err) {
      b.cash_out = err.code === 'CRASHED' ? 'crashed' : b.cash_out;
      $('cash-out-result').textContent = err.code === 'CRASHED' ? 'Crashed before the cash-out' : err.message;
    }
  }
  $('cash-out').disabled = false;
}

async function main() {
  try {
    const state = await open();
    token = state.token;
    session = state.session;
  } catch (err) {
    const [title, text] = OPEN_REFUSED[err.code] ?? ['Cannot open the game', err.message];
    setStatus(status, 'error', title);
    $('game-name').textContent = '';
    $('fatal').textContent = text;
    return;
  }
  $('game-name').textContent = session.game;
  $('username').textContent = session.username;
  $('mode').textContent = session.demo ? 'demo (virtual balance)' : `real money · ${session.currency}`;
  if (session.avatar_url) Object.assign($('avatar'), { src: session.avatar_url, hidden: false });
  $('selection').innerHTML = SELECTIONS[session.game]?.() ?? '';
  for (const id of ['player', 'live', 'betting', 'history']) $(id).hidden = false;
  $('bet-form').addEventListener('submit', placeBet);
  $('cash-out').addEventListener('click', () => void cashOut());
  await refreshBalance();
  showLive();
  void pollRound();
  requestAnimationFrame(frame);
}

void main();
