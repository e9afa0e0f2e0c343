/**
 * One WebSocket of the transport (ws.ts): what its subscriptions write through (WsLink of
 * sink.ts), the multiplexed connection's dependencies, and the slow-consumer rule. Methods live on
 * the prototype and what every socket shares is one object (WsShared), so an idle socket holds a
 * few small objects and no closures.
 *
 * Slow consumers: a socket whose unsent bytes pass the limit gets nothing more. uWebSockets.js
 * checks the same limit (`maxBackpressure`) on every topic publish and reports a message it drops
 * (`dropped`); a send of the edge's own checks it first. Either way the socket is marked slow,
 * counted once and its subscriptions end; the close (1008 "slow consumer") is sent once its buffer
 * has room for it again (`drained`), so a client that reads late gets what was queued, then the
 * close. One that never reads is dropped by uWS's idle timeout.
 */
import type { Principal } from '../../../../lib/auth/verifier.ts';
import type { Logger } from '../../../../lib/logger.ts';
import type { StreamCore } from '../../../../lib/stream/core.ts';
import type { Selection } from '../../../../lib/stream/hub.ts';
import type { DeliveryCount } from '../../../../lib/stream/metrics.ts';
import type { ConnectionSubscriptions, MultiplexDeps } from '../../../../lib/stream/multiplex.ts';
import type { StreamOptions } from '../../../../lib/stream/options.ts';
import type { ResumeDecision } from '../../../../lib/stream/resume.ts';
import { selectionLabel } from '../../../../lib/stream/selection.ts';
import type { SharedTopics } from '../../../../lib/stream/shared.ts';
import type { StreamSubscription } from '../../../../lib/stream/subscriber.ts';
import { type WsLink, WsSink } from './sink.ts';
import type { Uws } from './uws.ts';

/** Close code and reason for a subscriber over the buffer limit (RFC 6455 §7.4.1: policy). */
export const SLOW_CLOSE = { code: 1008, reason: 'slow consumer' } as const;
/** Close when a resume could not read the log (RFC 6455 §7.4.1: server error; the client retries). */
export const RESUME_FAILED_CLOSE = { code: 1011, reason: 'resume failed' } as const;

/** What every socket of one transport shares. */
export interface WsShared {
  readonly core: StreamCore;
  readonly topics: SharedTopics;
  /** Unsent bytes past which a socket is slow (config.edge.wsMaxBufferBytes). */
  readonly limit: number;
  readonly delivered: DeliveryCount;
  readonly slowCloses: { inc(): void };
  readonly log: Logger;
}

/** The user data of a socket (set by the upgrade). */
export interface SocketData {
  /** The subscription the path names; undefined for `/ws/` (envelope commands only). */
  readonly selection: Selection | undefined;
  readonly options: StreamOptions;
  /** The path subscription's resume decision (made before the upgrade). */
  readonly decision: Exclude<ResumeDecision, { kind: 'refused' }>;
  /** The first requested subprotocol (the token, once access control checks it); '' when none. */
  readonly protocol: string;
  readonly principal: Principal | undefined;
  /** Set by uWS's close handler: the socket must not be touched any more. */
  closed: boolean;
  /** Over the buffer limit: nothing more is sent, the close follows once it drains. */
  slow: boolean;
  conn: WsConnection | undefined;
  untrack: (() => void) | undefined;
}

// One send inside a cork without a closure per send: the cork callback runs synchronously.
let corkSocket: Uws.WebSocket<SocketData> | undefined;
let corkText = '';
const sendCorked = () => {
  corkSocket?.send(corkText, false);
};

/** One open socket. */
export class WsConnection implements WsLink, MultiplexDeps {
  readonly protocol = 'ws';
  readonly data: SocketData;
  subs: ConnectionSubscriptions | undefined;

  constructor(
    private readonly ws: Uws.WebSocket<SocketData>,
    private readonly shared: WsShared,
  ) {
    this.data = ws.getUserData();
  }

  get core(): StreamCore {
    return this.shared.core;
  }

  get principal(): Principal | undefined {
    return this.data.principal;
  }

  get topics(): SharedTopics {
    return this.shared.topics;
  }

  /** True once nothing may be written: closed, or slow. */
  get closed(): boolean {
    return this.data.closed || this.data.slow;
  }

  /** Sends one text frame, corked (this runs from the Kafka callback, outside uWS's own loop). */
  send(text: string): void {
    if (this.closed) return;
    if (this.ws.getBufferedAmount() > this.shared.limit) {
      this.slowDown(false);
      return;
    }
    corkSocket = this.ws;
    corkText = text;
    this.ws.cork(sendCorked);
    corkSocket = undefined;
    corkText = '';
  }

  /** The sink of a new subscription of this socket. */
  sink(_selection: Selection): WsSink {
    return new WsSink(this, this.data.options.envelope, this.shared.limit / 2);
  }

  delivered(): void {
    this.shared.delivered.add();
  }

  cork(run: () => void): void {
    if (this.closed) run();
    else this.ws.cork(run);
  }

  buffered(): number {
    return this.data.closed ? 0 : this.ws.getBufferedAmount();
  }

  join(topic: string): boolean {
    if (this.closed) return false;
    this.ws.subscribe(topic);
    return true;
  }

  /**
   * A subscription is on its topic. A plain socket's only subscription then needs nothing more
   * of JavaScript (no heartbeat, no unsubscribe; uWS takes a closing socket off its topics), so
   * the socket lets go of it and an idle socket keeps only itself (memory per socket).
   */
  joined(): void {
    if (!this.data.options.envelope) this.subs = undefined;
  }

  leave(topic: string): void {
    if (!this.data.closed) this.ws.unsubscribe(topic);
  }

  closeSlow(): void {
    this.slowDown(false);
  }

  resumeFailed(sub: StreamSubscription, err: Error): void {
    this.shared.log.warn({ selection: selectionLabel(sub.selection), err: err.message }, 'resume failed');
    if (this.data.options.envelope)
      this.subs?.drop(sub, 503, 'Resume failed: the log cannot be read now; subscribe again');
    else if (!this.closed) this.ws.end(RESUME_FAILED_CLOSE.code, RESUME_FAILED_CLOSE.reason);
  }

  /**
   * Marks the socket slow (once): counted, logged, its subscriptions ended on the next turn (not
   * from inside uWS's topic drain, which `dropped` runs in), the close sent once it drains.
   * @param dropped uWS dropped a message for it (called from its topic drain).
   */
  slowDown(dropped: boolean): void {
    const { data } = this;
    if (data.closed || data.slow) return;
    data.slow = true;
    this.shared.slowCloses.inc();
    this.shared.log.warn(
      { selection: data.selection && selectionLabel(data.selection), buffered: this.ws.getBufferedAmount() },
      'slow consumer closed',
    );
    setImmediate(endSubscriptions, this);
    if (!dropped) this.drained();
  }

  /** uWS's `drain`: a slow socket with room for the close frame again gets it. */
  drained(): void {
    const { data } = this;
    if (data.slow && !data.closed && this.ws.getBufferedAmount() <= this.shared.limit)
      this.ws.end(SLOW_CLOSE.code, SLOW_CLOSE.reason);
  }
}

function endSubscriptions(conn: WsConnection): void {
  conn.subs?.closeAll();
}
