/**
 * The WebTransport address of docs/architecture.md: `https://{host}:4433/wt?game=<slug>` or
 * `?type=<type>`, credential in `token=`, and the opt-ins of every stream (lib/stream/options.ts:
 * `since`, `envelope`, `latest`, `lifecycle`); with `envelope=1` the selection may be left out
 * (subscriptions then come as commands). Statuses and texts match the other transports
 * (lib/stream/selection.ts): malformed → 400, well-formed but unknown → 404, any other path → 404.
 * A refused request never becomes a session.
 */
import { MALFORMED_URL_TEXT } from '../../lib/http/error-form.ts';
import type { Selection } from '../../lib/stream/hub.ts';
import { type ParsedOptions, parseStreamOptions, queryOf } from '../../lib/stream/options.ts';
import { parseGameSelection, parseTypeSelection } from '../../lib/stream/selection.ts';

export const WT_PATH = '/wt';

export type WtRoute =
  | {
      readonly ok: true;
      /** Undefined only with `envelope=1`: a session that subscribes by commands. */
      readonly selection: Selection | undefined;
      readonly token: string | undefined;
    }
  | { readonly ok: false; readonly status: 400 | 404; readonly error: string };

/**
 * The query's parameters, decoded strictly: a malformed percent-encoding is refused as the API and
 * the other listeners refuse it (URLSearchParams would keep `%zz` as it is).
 * @returns undefined when a name or value does not decode.
 */
function queryParams(search: string): URLSearchParams | undefined {
  const out = new URLSearchParams();
  for (const pair of search.replace(/^\?/, '').split('&')) {
    if (pair === '') continue;
    const i = pair.indexOf('=');
    const [k, v] = i < 0 ? [pair, ''] : [pair.slice(0, i), pair.slice(i + 1)];
    try {
      out.append(decodeURIComponent(k.replaceAll('+', ' ')), decodeURIComponent(v.replaceAll('+', ' ')));
    } catch {
      return undefined;
    }
  }
  return out;
}

/** Routes the `:path` (path and query) of a CONNECT request. */
export function routeWebTransport(pathAndQuery: string): WtRoute {
  let url: URL;
  try {
    url = new URL(pathAndQuery, 'https://edge.invalid');
  } catch {
    return { ok: false, status: 400, error: 'Malformed request path' };
  }
  if (url.pathname !== WT_PATH) return { ok: false, status: 404, error: 'Not found' };
  const params = queryParams(url.search);
  if (!params) return { ok: false, status: 400, error: MALFORMED_URL_TEXT };
  const games = params.getAll('game');
  const types = params.getAll('type');
  const tokens = params.getAll('token');
  if (games.length > 1 || types.length > 1 || tokens.length > 1) {
    return { ok: false, status: 400, error: 'game, type and token may each be given once' };
  }
  const [game] = games;
  const [type] = types;
  if (game !== undefined && type !== undefined) {
    return { ok: false, status: 400, error: 'Give either game or type, not both' };
  }
  const token = tokens[0];
  if (game !== undefined) {
    const r = parseGameSelection(game);
    return r.ok ? { ok: true, selection: r.selection, token } : r;
  }
  if (type !== undefined) {
    const r = parseTypeSelection(type);
    return r.ok ? { ok: true, selection: r.selection, token } : r;
  }
  if (url.searchParams.get('envelope') === '1') return { ok: true, selection: undefined, token };
  return { ok: false, status: 400, error: 'A game or type query parameter is required' };
}

/**
 * The opt-ins of a CONNECT `:path`; lifecycle messages and a session without a selection need
 * the envelope, and `since` needs a selection (a command carries its own).
 */
export function routeOptions(pathAndQuery: string, selection: Selection | undefined): ParsedOptions {
  const parsed = parseStreamOptions(queryOf(pathAndQuery));
  if (!parsed.ok) return parsed;
  const o = parsed.options;
  if (o.lifecycle && !o.envelope)
    return { ok: false, status: 400, error: 'lifecycle messages need envelope=1' };
  if (!selection && o.since !== undefined)
    return { ok: false, status: 400, error: 'since needs a subscription: give it in the subscribe command' };
  return parsed;
}

/** `pathAndQuery` with the value of every `token=` parameter replaced, for logs. */
export function redactToken(pathAndQuery: string): string {
  return pathAndQuery.replace(/([?&]token=)[^&]*/g, '$1[redacted]');
}
