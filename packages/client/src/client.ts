/**
 * The rounds client: subscriptions over one transport, reconnected with backoff and jitter, each
 * resumed from its last position, so the application sees every round once and, per game, in
 * order, across reconnects and edge restarts.
 *
 * Per subscription the client keeps the last position the server gave and the last round id of
 * each game. A round at or below that id is a repeat and dropped; a live round whose `prev` (or a
 * heartbeat whose position) names a round the client never got means a lost datagram: the
 * subscription is resumed from its position. Live rounds that overtake the end of a catch-up
 * (WebTransport's datagrams may) are held until the `recovered` message and then given in order.
 *
 * A subscription is never given up without the application being told. Only a text with a
 * position's form is kept as a position. A position the server refuses (400) is replaced by the
 * last one known to be valid (one the server put on a round or a `recovered` message), else the
 * subscription starts live and `onRecovered` says so (`recovered: false`, the refused position,
 * the reason). A subscription the server could not start (503) is asked again with backoff.
 */
import { type BackoffOptions, backoffDelay } from './backoff.ts';
import { type Credentials, credentialFor } from './credentials.ts';
import { isPosition, roundsOf } from './position.ts';
import type { CloseInfo, Connection, SubscribeRequest, Transport } from './transport.ts';
import {
  type Envelope,
  type LifecycleMessage,
  type RecoveredInfo,
  type Selection,
  type ServerError,
  type StreamRound,
  subscriptionName,
} from './types.ts';

export interface ClientOptions {
  /**
   * The platform's origin, e.g. `https://casino.example` (pages: `location.origin`), or several
   * (edges without a balancer in front): each (re)connection takes the next one in turn.
   */
  readonly baseUrl: string | readonly string[];
  /** websocketTransport(), sseTransport(), webTransport() or, in Node, grpcTransport(). */
  readonly transport: Transport;
  readonly credentials?: Credentials;
  readonly reconnect?: BackoffOptions;
  /** fetch for token requests (default: the global one). */
  readonly fetch?: typeof fetch;
}

/** `connecting` (first time), `open`, `reconnecting` (waiting `delayMs`, then connecting), `closed`. */
export type ClientState = 'connecting' | 'open' | 'reconnecting' | 'closed';

export interface StateChange {
  readonly state: ClientState;
  readonly previous: ClientState;
  /** Reconnection attempt (1 for the first) while reconnecting. */
  readonly attempt?: number;
  /** Delay before the next attempt, ms (reconnecting). */
  readonly delayMs?: number;
  /** Why the connection ended (reconnecting, closed). */
  readonly reason?: string;
}

/** How a round reached the application. */
export interface RoundMeta {
  /** Where this subscription resumes after this round. */
  readonly position: string;
  /** The latest round sent on subscribe (`latest: true`), not a new one. */
  readonly initial: boolean;
  /** Replayed by a catch-up (it happened while the client was away). */
  readonly replay: boolean;
}

export interface SubscribeOptions {
  /** Resume from this position (a `position` of an earlier run); default: live from now. */
  readonly since?: string;
  /** The latest round of each game first (on the first subscribe only; resumes replay instead). */
  readonly latest?: boolean;
  /** Lifecycle messages (round-opened, betting-closed). */
  readonly lifecycle?: boolean;
  onRound?(round: StreamRound, meta: RoundMeta): void;
  onLifecycle?(message: LifecycleMessage): void;
  /**
   * After each (re)subscribe's catch-up: whether the resume was complete. A resume that could not
   * be honoured says why in `reason`: a position the server refused (`since` is the refused
   * position; the subscription went on live from now), one ahead of the log, a log unavailable.
   */
  onRecovered?(info: RecoveredInfo): void;
  /**
   * The server refused the subscription itself (e.g. 404 unknown game, 403, 429 too many); it is
   * not retried. A refused position is not such a refusal: see onRecovered.
   */
  onError?(error: ServerError): void;
}

/** A subscription of the client. */
export interface Subscription {
  /** `game:crash`, `type:multiplier` or `all`. */
  readonly name: string;
  /** Where it resumes: the last position the server gave, or undefined before any. */
  readonly position: string | undefined;
  /** Stops it. */
  close(): void;
}

type Listener = (change: StateChange) => void;

/** Live rounds held while a catch-up is not over, at most (more: resume instead). */
const MAX_HELD = 10_000;

class Sub implements Subscription {
  position: string | undefined;
  /** The last position known to be valid: the server's own, on a round or `recovered` message. */
  valid: string | undefined;
  /** The position the subscription was last asked from (undefined: live). */
  asked: string | undefined;
  /** A position was refused: reported with the next `recovered`, the first refused one. */
  refusal: { readonly since: string; readonly reason: string } | undefined;
  /** Start live, not from `opts.since` (the server refused it, and no valid position is known). */
  fresh = false;
  /** Attempts to start it that the server could not serve (503) in a row. */
  retries = 0;
  /** Last round id per game given (or named by the start position). */
  readonly last = new Map<string, number>();
  /** Last lifecycle event per game, to drop the repeat of a current phase after a resume. */
  readonly phase = new Map<string, string>();
  ready = false;
  failed = false;
  held: Extract<Envelope, { type: 'round' }>[] = [];

  constructor(
    readonly name: string,
    readonly opts: SubscribeOptions,
    private readonly remove: (s: Sub) => void,
  ) {}

  close(): void {
    this.remove(this);
  }
}

/** Creates a client; it connects on the first subscription. */
export function createRoundsClient(options: ClientOptions): RoundsClient {
  return new RoundsClient(options);
}

export class RoundsClient {
  private readonly subs = new Map<string, Sub>();
  private readonly listeners = new Set<Listener>();
  private conn: Connection | undefined;
  private live = false;
  private current: ClientState = 'connecting';
  private attempt = 0;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private closed = false;
  private started = false;
  private connects = 0;

  constructor(private readonly options: ClientOptions) {}

  /** The connection's state. */
  get state(): ClientState {
    return this.current;
  }

  /** Listens to state changes; @returns the removal. */
  onState(listener: Listener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * Subscribes to a game, a type or every game.
   * @throws Error when the client is closed or already holds this subscription.
   */
  subscribe(selection: Selection, opts: SubscribeOptions = {}): Subscription {
    if (this.closed) throw new Error('the client is closed');
    const name = subscriptionName(selection);
    if (this.subs.has(name)) throw new Error(`already subscribed to ${name}`);
    const sub = new Sub(name, opts, (s) => this.remove(s));
    this.subs.set(name, sub);
    if (!this.started) {
      this.started = true;
      void this.connect();
    } else if (this.live) this.conn?.subscribe(this.request(sub));
    return sub;
  }

  /** Closes every subscription and the connection. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    clearTimeout(this.timer);
    this.subs.clear();
    this.conn?.close();
    this.conn = undefined;
    this.setState({ state: 'closed', previous: this.current, reason: 'closed by the application' });
  }

  private setState(change: StateChange): void {
    this.current = change.state;
    for (const l of this.listeners) l(change);
  }

  private remove(s: Sub): void {
    if (this.subs.get(s.name) !== s) return;
    this.subs.delete(s.name);
    if (this.live) this.conn?.unsubscribe(s.name);
  }

  private request(s: Sub): SubscribeRequest {
    const since = s.position ?? (s.fresh ? undefined : s.opts.since);
    s.asked = since || undefined;
    return {
      sub: s.name,
      ...(since ? { since } : {}),
      latest: s.position === undefined && s.opts.latest === true,
      lifecycle: s.opts.lifecycle === true,
    };
  }

  /** The base URL of the next connection (round robin over several). */
  private nextBase(): string {
    const b = this.options.baseUrl;
    if (typeof b === 'string') return b;
    return b[this.connects++ % b.length] as string;
  }

  private async connect(): Promise<void> {
    if (this.closed) return;
    const baseUrl = this.nextBase();
    let credential: string | undefined;
    try {
      credential = await credentialFor(
        this.options.credentials,
        baseUrl,
        this.options.fetch ?? globalThis.fetch.bind(globalThis),
      );
    } catch (err) {
      return this.lost({ reason: `no credential: ${(err as Error).message}` });
    }
    if (this.closed) return;
    let ended = false;
    const conn = this.options.transport.connect(
      { baseUrl, credential },
      {
        open: () => {
          if (ended || this.closed) return;
          this.attempt = 0;
          this.setState({ state: 'open', previous: this.current });
        },
        message: (e) => {
          if (!ended) this.receive(e);
        },
        close: (info) => {
          if (ended) return;
          ended = true;
          this.live = false;
          this.conn = undefined;
          this.lost(info);
        },
      },
    );
    this.conn = conn;
    // Subscriptions go at once: the transport holds them until it is connected (and an SSE or
    // gRPC connection is its streams, so it is only `open` once one of them answered).
    this.live = true;
    for (const s of this.subs.values()) this.start(s);
  }

  private lost(info: CloseInfo): void {
    if (this.closed) return;
    if (info.fatal) {
      this.closed = true;
      this.setState({ state: 'closed', previous: this.current, reason: info.reason });
      return;
    }
    this.attempt++;
    const delayMs = backoffDelay(this.attempt, this.options.reconnect);
    this.setState({
      state: 'reconnecting',
      previous: this.current,
      attempt: this.attempt,
      delayMs,
      reason: info.reason,
    });
    this.timer = setTimeout(() => void this.connect(), delayMs);
  }

  /** (Re)starts a subscription on the current connection. */
  private start(s: Sub): void {
    if (s.failed) return;
    s.ready = false;
    s.held = [];
    this.conn?.subscribe(this.request(s));
  }

  /** Resumes `s` from its position (a round was lost). */
  private resync(s: Sub): void {
    if (!this.live) return;
    this.conn?.unsubscribe(s.name);
    this.start(s);
  }

  private receive(e: Envelope): void {
    if (e.type === 'error' && e.sub === null) return;
    const s = e.sub === null ? undefined : this.subs.get(e.sub);
    if (!s) return;
    switch (e.type) {
      case 'round':
        if (s.ready || e.initial || e.replay) this.apply(s, e);
        else if (s.held.push(e) > MAX_HELD) this.resync(s);
        return;
      case 'recovered': {
        if (isPosition(e.position)) s.position = s.valid = e.position;
        s.ready = true;
        s.retries = 0;
        const refusal = s.refusal;
        s.refusal = undefined;
        // Started live for want of a valid position: the refused one is what the application asked for.
        s.opts.onRecovered?.(
          refusal && s.asked === undefined
            ? { ...e.data, recovered: false, since: refusal.since, reason: refusal.reason }
            : e.data,
        );
        // Rounds held meanwhile: a catch-up without replay marks (SSE), or datagrams that overtook it.
        for (const r of s.held.splice(0).sort((a, b) => a.data.timestamp - b.data.timestamp))
          this.apply(s, r);
        // A game the client has no round of starts where the server says the subscription stands.
        for (const [g, rid] of roundsOf(e.position)) if (!s.last.has(g)) s.last.set(g, rid);
        return;
      }
      case 'heartbeat':
        if (!s.ready || !isPosition(e.position)) return;
        if ([...roundsOf(e.position)].some(([g, rid]) => rid > (s.last.get(g) ?? 0))) this.resync(s);
        else s.position = e.position;
        return;
      case 'lifecycle': {
        const key = `${e.data.round_id}:${e.data.event}`;
        if (s.phase.get(e.data.game_slug) === key) return;
        s.phase.set(e.data.game_slug, key);
        s.opts.onLifecycle?.(e.data);
        return;
      }
      case 'error':
        if (e.data.status === 503) {
          const delayMs = backoffDelay(++s.retries, this.options.reconnect);
          setTimeout(() => this.live && this.subs.get(s.name) === s && this.start(s), delayMs);
          return;
        }
        if (e.data.status === 400 && s.asked !== undefined && e.data.op !== 'unsubscribe') {
          this.refused(s, s.asked, e.data);
          return;
        }
        s.failed = true;
        s.opts.onError?.(e.data);
        return;
    }
  }

  /**
   * The server refused position `since` (400): the subscription goes on from the last valid
   * position when that is another one, else live from now (told with the next `recovered`).
   */
  private refused(s: Sub, since: string, error: ServerError): void {
    s.refusal ??= { since, reason: `position refused: ${error.error}` };
    if (s.valid !== undefined && s.valid !== since) s.position = s.valid;
    else {
      s.position = undefined;
      s.fresh = true;
    }
    this.start(s);
  }

  private apply(s: Sub, e: Extract<Envelope, { type: 'round' }>): void {
    const { game_slug: g, round_id: rid } = e.data;
    const last = s.last.get(g);
    if (last !== undefined && rid <= last) return; // given before
    if (!e.initial && !e.replay && e.prev != null && last !== undefined && e.prev > last) {
      this.resync(s); // a round between the last one given and this one was lost
      return;
    }
    s.last.set(g, rid);
    if (isPosition(e.position)) s.position = s.valid = e.position;
    if (e.initial && s.opts.latest !== true) return; // SSE sends `initial` unasked: its position only
    s.opts.onRound?.(e.data, {
      position: e.position,
      initial: e.initial === true,
      replay: e.replay === true,
    });
  }
}
