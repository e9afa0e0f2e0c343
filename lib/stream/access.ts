/**
 * Credential checks for stream connections (docs/contract.md "Authentication"
 * 3–7), shared by every streaming transport of both edges (WebSocket, SSE, gRPC, WebTransport).
 *
 * - A connection without a credential passes only when its protocol's switch is off
 *   (AUTH_REQUIRE_WS/SSE/GRPC/WT); a credential that is present is always checked, so a bad one is
 *   refused even with the switch off (docs/contract.md "Authentication" 6).
 * - The verifier (lib/auth/verifier.ts) applies key lookup, token HMAC and expiry, revocation, the
 *   public-key Origin rule and the stream scope: one game needs `stream:game` (or `stream:*`), a
 *   type or all games need `stream:*`.
 * - Connection attempts are limited per key (tokens count against their parent key) to the key's
 *   `rate_limit` per minute, per process, with rate-limiter-flexible's in-memory limiter; over it
 *   → 429 with the seconds to wait. Several edge processes each apply the limit (no shared store:
 *   a connection lives for minutes, so attempts are few and a per-process bound is enough).
 * - Revocation: a revoked or deleted key makes every open stream that authenticated with it (or
 *   with one of its tokens) close at once; new attempts are refused by the verifier.
 *
 * Runs under Node and Deno (services/edge-webtransport).
 */
import { RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';
import type { KeyListener, KeyLookup } from '../auth/key-table.ts';
import { type Scope, streamScope } from '../auth/scopes.ts';
import { type AuthFailureReason, authenticate, type Principal } from '../auth/verifier.ts';
import type { Selection } from './hub.ts';
import type { EdgeMetrics } from './metrics.ts';

export type StreamProtocol = 'ws' | 'sse' | 'grpc' | 'wt';

/** A key table as the access check needs it: lookups plus change notifications. */
export interface AccessKeyTable extends KeyLookup {
  onChange(listener: KeyListener): () => void;
}

export interface AccessRequest {
  /** The raw credential (key or token); undefined or '' when none was sent. */
  readonly credential: string | undefined;
  /** The request's Origin header, when any (browsers send it on WebSocket, fetch and WebTransport). */
  readonly origin: string | undefined;
  /** What the stream delivers; its scope is needed (`stream:game` for one game, else `stream:*`). */
  readonly selection?: Selection;
  /** The scope needed instead, for a request that is not a stream (gRPC ListGames: `read:games`). */
  readonly scope?: Scope;
}

export type AccessVerdict =
  | {
      readonly ok: true;
      /** Undefined for an anonymous connection allowed by a switch that is off. */
      readonly principal: Principal | undefined;
    }
  | {
      readonly ok: false;
      readonly status: 401 | 403 | 429;
      readonly reason: AuthFailureReason | 'rate_limited';
      readonly message: string;
      /** Seconds until another attempt can pass (429 only). */
      readonly retryAfterS?: number;
    };

export interface StreamAccess {
  /**
   * Decides whether a new stream may open. Resolves, never rejects for a refusal.
   * @param nowMs Unix ms (token expiry).
   */
  check(protocol: StreamProtocol, req: AccessRequest, nowMs: number): Promise<AccessVerdict>;
  /**
   * Registers an open stream; `close` is called once if its key is revoked or deleted.
   * @returns the removal, to call when the stream ends. A no-op for anonymous streams.
   */
  track(principal: Principal | undefined, close: () => void, protocol: StreamProtocol): () => void;
  /** Stops listening to the key table. */
  close(): void;
}

export interface StreamAccessOptions {
  readonly table: AccessKeyTable;
  /** Which protocols require a credential (config.auth.requireWs/Sse/Grpc/Wt). */
  readonly require: Readonly<Record<StreamProtocol, boolean>>;
  /** Counters (edge_auth_refusals_total, edge_revoked_closes_total); absent in unit tests. */
  readonly metrics?: Pick<EdgeMetrics, 'authRefusals' | 'revokedCloses'>;
}

/** The 401/403/429 texts of docs/contract.md "Errors" used by every stream protocol. */
export const HTTP_ERROR = {
  401: 'Unauthorized',
  403: 'Forbidden',
  429: 'Too many requests, please slow down',
};

/** Builds the check; it subscribes to the table's changes until `close()`. */
export function createStreamAccess(opts: StreamAccessOptions): StreamAccess {
  const { table } = opts;
  // One limiter per distinct rate_limit (points per 60 s); keys with equal limits share it.
  const limiters = new Map<number, RateLimiterMemory>();
  const open = new Map<string, Set<() => void>>();

  const limiterFor = (perMinute: number) => {
    let l = limiters.get(perMinute);
    if (!l) {
      l = new RateLimiterMemory({ points: Math.max(1, perMinute), duration: 60 });
      limiters.set(perMinute, l);
    }
    return l;
  };

  const stopListening = table.onChange((keyId, record) => {
    if (record && record.revokedAtMs === null) return;
    const closers = open.get(keyId);
    if (!closers) return;
    open.delete(keyId);
    for (const c of closers) c();
  });

  async function decide(protocol: StreamProtocol, req: AccessRequest, nowMs: number): Promise<AccessVerdict> {
    if ((req.credential === undefined || req.credential === '') && !opts.require[protocol]) {
      return { ok: true, principal: undefined };
    }
    const res = authenticate(table, {
      credential: req.credential,
      origin: req.origin,
      now: nowMs,
      scope: req.scope ?? streamScope(req.selection?.kind ?? 'all'),
    });
    if (!res.ok) return res;
    const p = res.principal;
    try {
      await limiterFor(p.rateLimit).consume(p.keyId);
    } catch (err) {
      if (!(err instanceof RateLimiterRes)) throw err;
      return {
        ok: false,
        status: 429,
        reason: 'rate_limited',
        message: `more than ${p.rateLimit} connection attempts a minute with this key`,
        retryAfterS: Math.max(1, Math.ceil(err.msBeforeNext / 1000)),
      };
    }
    return { ok: true, principal: p };
  }

  return {
    async check(protocol, req, nowMs) {
      const v = await decide(protocol, req, nowMs);
      if (!v.ok) opts.metrics?.authRefusals.inc({ protocol, reason: v.reason });
      return v;
    },
    track(principal, close, protocol) {
      if (!principal) return () => {};
      const { keyId } = principal;
      let set = open.get(keyId);
      if (!set) {
        set = new Set();
        open.set(keyId, set);
      }
      let once = false;
      const closer = () => {
        if (once) return;
        once = true;
        opts.metrics?.revokedCloses.inc({ protocol });
        close();
      };
      set.add(closer);
      return () => {
        const s = open.get(keyId);
        s?.delete(closer);
        if (s?.size === 0) open.delete(keyId);
      };
    },
    close() {
      stopListening();
      open.clear();
    },
  };
}

/** The credential of a `Bearer <credential>` value, or the value itself (then refused as malformed). */
export function bearer(value: string | undefined): string | undefined {
  if (value === undefined || value === '') return undefined;
  const m = /^Bearer[ \t]+(\S*)\s*$/i.exec(value);
  return m ? m[1] : value;
}

/**
 * The origin a request comes from: its `Origin` header, else the origin of its `Referer`. Browsers
 * omit `Origin` on same-origin GETs (an EventSource on the page's own origin, e.g. the demo pages
 * behind the gateway) but send `Referer` there by default; a cross-origin request always carries
 * `Origin`, so another site cannot use the fallback to pass a public key's origin check.
 * @returns undefined when neither header names an http(s) origin.
 */
export function requestOrigin(headers: {
  readonly origin?: string | string[] | undefined;
  readonly referer?: string | undefined;
}): string | undefined {
  const o = headers.origin;
  if (typeof o === 'string' && o !== '') return o;
  const r = headers.referer;
  if (typeof r !== 'string' || r === '') return undefined;
  try {
    const u = new URL(r);
    return u.protocol === 'http:' || u.protocol === 'https:' ? u.origin : undefined;
  } catch {
    return undefined;
  }
}
