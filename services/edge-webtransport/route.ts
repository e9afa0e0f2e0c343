/**
 * The WebTransport address of DESIGN.md: `https://{host}:4433/wt?game=<slug>` or
 * `?type=<type>`, credential in `token=` (read by the access-control issue; ignored until then).
 * Statuses and texts match the other transports (lib/stream/selection.ts): malformed → 400,
 * well-formed but unknown → 404, any other path → 404. A refused request never becomes a session.
 */
import { MALFORMED_URL_TEXT } from '../../lib/http/error-form.ts';
import type { Selection } from '../../lib/stream/hub.ts';
import { parseGameSelection, parseTypeSelection } from '../../lib/stream/selection.ts';

export const WT_PATH = '/wt';

export type WtRoute =
  | { readonly ok: true; readonly selection: Selection; readonly token: string | undefined }
  | { readonly ok: false; readonly status: 400 | 404; readonly error: string };

/**
 * The query's parameters, decoded strictly: a malformed percent-encoding is refused as the API and
 * the other listeners refuse it (URLSearchParams would keep `%zz` as it is; issue 13 item 5).
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
  return { ok: false, status: 400, error: 'A game or type query parameter is required' };
}

/** `pathAndQuery` with the value of every `token=` parameter replaced, for logs (issue 4 item 9). */
export function redactToken(pathAndQuery: string): string {
  return pathAndQuery.replace(/([?&]token=)[^&]*/g, '$1[redacted]');
}
