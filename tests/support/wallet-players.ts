/**
 * Players and the operator sandbox over real HTTP, for the wallet e2e tests: the path an operator
 * and a browser take (POST /games/request-access with the operator bearer, POST /play/open with
 * the game URL's one-time launch code, GET /play/balance, POST /play/bets) and the sandbox's
 * admin routes (PUT /_sandbox/faults, GET /_sandbox/ledger).
 */

/** A player whose game URL was opened: the player bearer and the session. */
export interface Player {
  readonly user: string;
  readonly game: string;
  /** Player bearer of the /play/* routes (`pt_…`). */
  readonly token: string;
  readonly sessionId: string;
  /** The session_token request-access returned (sent to the operator in every callback). */
  readonly sessionToken: string;
  readonly gameUrl: string;
}

/** A JSON answer: status and parsed body (undefined when not JSON). */
export interface JsonReply<T = Record<string, unknown>> {
  readonly status: number;
  readonly body: T;
  readonly contentType: string;
}

async function send<T>(url: string, init: RequestInit): Promise<JsonReply<T>> {
  const res = await fetch(url, init);
  const text = await res.text();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  return { status: res.status, body: body as T, contentType: res.headers.get('content-type') ?? '' };
}

const json = (method: string, body: unknown, token?: string): RequestInit => ({
  method,
  headers: {
    'content-type': 'application/json',
    ...(token ? { authorization: `Bearer ${token}` } : {}),
  },
  body: JSON.stringify(body),
});

/** POST /games/request-access with the operator's bearer. */
export function requestAccess(
  base: string,
  apiToken: string,
  body: Record<string, unknown>,
): Promise<JsonReply<{ game_url: string; session_token: string }>> {
  return send(`${base}/games/request-access`, json('POST', body, apiToken));
}

/** The launch code of a game URL (`?launch=`). @throws Error when the URL has none. */
export function launchOf(gameUrl: string): string {
  const code = new URL(gameUrl).searchParams.get('launch');
  if (!code) throw new Error(`game_url without a launch code: ${gameUrl}`);
  return code;
}

/** POST /play/open with the launch code of `gameUrl`, on the origin of `base`. */
export function openGame(
  base: string,
  gameUrl: string,
): Promise<JsonReply<{ player_token: string; session: { session_id: string } }>> {
  return send(`${base}/play/open`, json('POST', { launch: launchOf(gameUrl) }));
}

/**
 * request-access then open: a player of `game` named `user` (other request-access fields in `extra`).
 * @throws Error naming the step and status when either is refused.
 */
export async function newPlayer(
  base: string,
  apiToken: string,
  user: string,
  game: string,
  extra: Record<string, unknown> = {},
): Promise<Player> {
  const access = await requestAccess(base, apiToken, { game, user_id: user, username: user, ...extra });
  if (access.status !== 200)
    throw new Error(`request-access ${access.status}: ${JSON.stringify(access.body)}`);
  if (!access.body.game_url.startsWith(`${base}/play/`))
    throw new Error(`game_url ${access.body.game_url} is not on ${base}`);
  const opened = await openGame(base, access.body.game_url);
  if (opened.status !== 200) throw new Error(`open ${opened.status}: ${JSON.stringify(opened.body)}`);
  return {
    user,
    game,
    token: opened.body.player_token,
    sessionId: opened.body.session.session_id,
    sessionToken: access.body.session_token,
    gameUrl: access.body.game_url,
  };
}

/** GET /play/balance of a player. */
export function playerBalance(
  base: string,
  p: Player,
): Promise<JsonReply<{ balance: string; currency: string; demo: boolean }>> {
  return send(`${base}/play/balance`, { headers: { authorization: `Bearer ${p.token}` } });
}

/** POST /play/bets of a player. */
export async function placeBet(
  base: string,
  p: Player,
  body: Record<string, unknown>,
): Promise<
  JsonReply<{ tx_id: number; round_id: number; count_register: number; detail?: string; code?: string }>
> {
  type Reply = JsonReply<{
    tx_id: number;
    round_id: number;
    count_register: number;
    detail?: string;
    code?: string;
    next_round_opens_at?: string | null;
  }>;
  // Bets are taken only while a round's betting window is open. A bet that names no
  // round waits for the next window, as a player does; one that names a round is sent as it is.
  const until = Date.now() + 60_000;
  for (;;) {
    const r = await send<Reply['body']>(`${base}/play/bets`, json('POST', body, p.token));
    if (
      r.status !== 409 ||
      r.body.code !== 'BETTING_CLOSED' ||
      body.round_id !== undefined ||
      Date.now() > until
    )
      return r;
    const opens = r.body.next_round_opens_at ? Date.parse(r.body.next_round_opens_at) : Number.NaN;
    await new Promise((res) =>
      setTimeout(res, Number.isFinite(opens) ? Math.max(20, opens - Date.now() + 20) : 100),
    );
  }
}

/** A fault rule of the sandbox (services/operator-sandbox/faults.ts). */
export interface FaultRule {
  readonly kind?: 'bet' | 'win' | 'rollback' | 'balance';
  readonly mode: 'latency' | 'error500' | 'timeout' | 'commit-then-500' | 'commit-then-drop' | 'malformed';
  readonly latencyMs?: number;
  readonly count?: number;
  /** Chance (0..1) that a matching callback gets the fault; absent: every one. */
  readonly probability?: number;
}

/** Replaces the sandbox's fault rules; returns the rules now active. @throws Error when refused. */
export async function setFaults(sandboxUrl: string, rules: readonly FaultRule[]): Promise<FaultRule[]> {
  const r = await send<{ rules: FaultRule[] }>(`${sandboxUrl}/_sandbox/faults`, json('PUT', rules));
  if (r.status !== 200) throw new Error(`PUT /_sandbox/faults ${r.status}: ${JSON.stringify(r.body)}`);
  return r.body.rules;
}

/** The sandbox's fault rules with their remaining counts. */
export async function faultsLeft(sandboxUrl: string): Promise<FaultRule[]> {
  return (await send<{ rules: FaultRule[] }>(`${sandboxUrl}/_sandbox/faults`, {})).body.rules;
}

/** One movement of the sandbox ledger. */
export interface LedgerTx {
  readonly kind: 'bet' | 'win' | 'rollback';
  readonly provider_tx_id: string;
  readonly linked_tx_id: string | null;
  readonly amount_minor: number;
  readonly delta_minor: number;
}

/** GET /_sandbox/ledger of a player (status 404 for an account the sandbox never saw). */
export function ledger(
  sandboxUrl: string,
  user: string,
  currency = 'USD',
): Promise<JsonReply<{ balance: string; balance_minor: number; transactions: LedgerTx[] }>> {
  const q = new URLSearchParams({ user_id: user, currency });
  return send(`${sandboxUrl}/_sandbox/ledger?${q}`, {});
}
