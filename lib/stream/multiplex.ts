/**
 * The subscriptions of one connection speaking the envelope protocol, on
 * WebSocket and WebTransport alike: commands in (commands.ts), envelopes out, each subscription a
 * StreamSubscription (subscriber.ts) with the transport's own sink.
 *
 * Rules, each answered with an `error` envelope naming the subscription:
 * - one subscription per selection (409 "Already subscribed");
 * - at most STREAM_MAX_SUBSCRIPTIONS per connection (429 "Too many subscriptions…");
 * - the key's scope per subscription, as on connect: a type or `all` needs `stream:*` (403);
 * - a bad position is refused (400 "Invalid position: …"), a future one starts live (recovered false);
 * - unsubscribing from something not subscribed is 404 "Not subscribed".
 */
import { hasScope, streamScope } from '../auth/scopes.ts';
import type { Principal } from '../auth/verifier.ts';
import { parseCommand, type SubscribeCommand } from './commands.ts';
import type { StreamCore } from './core.ts';
import { errorEnvelope, unsubscribedEnvelope } from './envelope.ts';
import { refusedPositionText } from './options.ts';
import type { ResumeDecision } from './resume.ts';
import { type Selection, selectionLabel } from './selection.ts';
import { type StreamSink, type StreamSubscription, startSubscription } from './subscriber.ts';

export interface MultiplexDeps {
  readonly core: StreamCore;
  /** `protocol` label of the metrics. */
  readonly protocol: string;
  /** Who opened the connection (undefined: anonymous, allowed by a switch that is off). */
  readonly principal: Principal | undefined;
  /** Writes one envelope on the connection's reliable channel. */
  send(text: string): void;
  /** The transport's sink for a new subscription of `selection`. */
  sink(selection: Selection): StreamSink;
}

/** Options of one subscription. */
export interface SubscribeOptions {
  readonly latest: boolean;
  readonly lifecycle: boolean;
}

/** The subscriptions of one connection. */
export class ConnectionSubscriptions {
  private readonly subs = new Map<string, StreamSubscription>();
  private readonly starting = new Set<string>();
  private closed = false;

  constructor(private readonly deps: MultiplexDeps) {}

  /** Subscriptions held (and being started). */
  get size(): number {
    return this.subs.size + this.starting.size;
  }

  /** Every subscription, by name. */
  entries(): IterableIterator<[string, StreamSubscription]> {
    return this.subs.entries();
  }

  /** Applies one command text; refusals become `error` envelopes. */
  async command(text: string): Promise<void> {
    const parsed = parseCommand(text);
    if (!parsed.ok) {
      this.deps.send(errorEnvelope(parsed.sub ?? null, parsed.status, parsed.error, parsed.op));
      return;
    }
    const c = parsed.command;
    if (c.op === 'unsubscribe') this.unsubscribe(c.sub);
    else await this.subscribe(c);
  }

  /** Checks and starts a subscription asked for by a command. */
  async subscribe(c: SubscribeCommand): Promise<void> {
    const refuse = (status: number, error: string) =>
      this.deps.send(errorEnvelope(c.sub, status, error, 'subscribe'));
    if (this.subs.has(c.sub) || this.starting.has(c.sub)) return refuse(409, 'Already subscribed');
    const limit = this.deps.core.maxSubscriptions;
    if (this.size >= limit) return refuse(429, `Too many subscriptions on this connection (limit ${limit})`);
    const p = this.deps.principal;
    if (p && !hasScope(p, streamScope(c.selection.kind))) return refuse(403, 'Forbidden');
    this.starting.add(c.sub);
    let decision: ResumeDecision;
    try {
      decision = await this.deps.core.decide(c.selection, c.since);
    } finally {
      this.starting.delete(c.sub);
    }
    if (this.closed) return;
    if (decision.kind === 'refused') {
      this.deps.core.report(this.deps.protocol, decision);
      return refuse(400, refusedPositionText(decision.reason));
    }
    this.adopt(c.selection, decision, c);
  }

  /** Starts a subscription already decided (the one a connection names in its address). */
  adopt(
    selection: Selection,
    decision: Exclude<ResumeDecision, { kind: 'refused' }>,
    opts: SubscribeOptions,
  ): StreamSubscription {
    const name = selectionLabel(selection);
    const { sub, started } = startSubscription(
      this.deps.core,
      selection,
      this.deps.sink(selection),
      decision,
      {
        latest: opts.latest ? 'each' : 'none',
        lifecycle: opts.lifecycle,
      },
    );
    this.subs.set(name, sub);
    void started.then((o) => this.deps.core.report(this.deps.protocol, decision, o));
    return sub;
  }

  /** Ends subscription `name` and acknowledges it with its last position. */
  unsubscribe(name: string): void {
    const sub = this.subs.get(name);
    if (!sub) {
      this.deps.send(errorEnvelope(name, 404, 'Not subscribed', 'unsubscribe'));
      return;
    }
    sub.close();
    this.subs.delete(name);
    this.deps.send(unsubscribedEnvelope(name, sub.positionText()));
  }

  /** Ends a subscription on the server's side (its catch-up failed) with an `error` envelope. */
  drop(sub: StreamSubscription, status: number, error: string): void {
    const name = selectionLabel(sub.selection);
    if (this.subs.get(name) !== sub) return;
    sub.close();
    this.subs.delete(name);
    this.deps.send(errorEnvelope(name, status, error));
  }

  /** Ends every subscription (the connection is gone). */
  closeAll(): void {
    this.closed = true;
    for (const s of this.subs.values()) s.close();
    this.subs.clear();
  }
}
