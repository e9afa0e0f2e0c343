/**
 * The opt-ins of a stream request, read alike on WebSocket, SSE and WebTransport query strings
 * (gRPC carries the same in its request messages):
 *
 * | parameter     | meaning                                                                    |
 * |---------------|----------------------------------------------------------------------------|
 * | `since`       | a position to resume from (lib/stream/position.ts)                         |
 * | `envelope=1`  | envelopes instead of bare rounds (lib/stream/envelope.ts); SSE: the `recovered` event |
 * | `latest=1`    | the latest round of each game of the subscription on subscribe (SSE always sends `initial`) |
 * | `lifecycle=1` | lifecycle messages (lib/stream/lifecycle.ts)                               |
 *
 * A flag is `1`/`true` or `0`/`false`; anything else, or a parameter given twice, is refused with
 * 400 before the stream opens (one rule for every protocol, like the selection's).
 */

export interface StreamOptions {
  readonly since: string | undefined;
  readonly envelope: boolean;
  readonly latest: boolean;
  readonly lifecycle: boolean;
}

export type ParsedOptions =
  | { readonly ok: true; readonly options: StreamOptions }
  | { readonly ok: false; readonly status: 400; readonly error: string };

const FLAGS = ['envelope', 'latest', 'lifecycle'] as const;

/** Reads the options from a query; `all(name)` returns every value of a parameter. */
export function parseStreamOptions(all: (name: string) => readonly string[]): ParsedOptions {
  const one = (name: string): string | undefined | Error => {
    const v = all(name);
    if (v.length > 1) return new Error(`${name} may be given once`);
    return v[0];
  };
  const since = one('since');
  if (since instanceof Error) return { ok: false, status: 400, error: since.message };
  const flags: Record<string, boolean> = {};
  for (const f of FLAGS) {
    const v = one(f);
    if (v instanceof Error) return { ok: false, status: 400, error: v.message };
    if (v === undefined || v === '0' || v === 'false') flags[f] = false;
    else if (v === '1' || v === 'true') flags[f] = true;
    else return { ok: false, status: 400, error: `${f} must be 1 or 0` };
  }
  return {
    ok: true,
    options: {
      since: since === '' ? undefined : since,
      envelope: flags.envelope === true,
      latest: flags.latest === true,
      lifecycle: flags.lifecycle === true,
    },
  };
}

/** The query of a URL path (`/ws/crash?since=…`) as `all(name)`. */
export function queryOf(pathAndQuery: string): (name: string) => readonly string[] {
  const i = pathAndQuery.indexOf('?');
  const q = new URLSearchParams(i < 0 ? '' : pathAndQuery.slice(i + 1));
  return (name) => q.getAll(name);
}

/** A position refused as `since`: the error text every protocol answers with. */
export function refusedPositionText(reason: string): string {
  return `Invalid position: ${reason}`;
}
