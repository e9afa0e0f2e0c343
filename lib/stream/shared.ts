/**
 * Live rounds handed to a server's own fan-out: a server with topic publish
 * (uWebSockets.js `app.publish`: one call, and its C++ writes the message to every socket of the
 * topic, corked, so a burst leaves in one write per socket) gets each round once per topic instead
 * of once per subscriber.
 *
 * A topic is one selection in one wire form, so every socket on it gets the same bytes:
 * - `json`: the stream form (plain subscriptions);
 * - `envelope`: the live `round` envelope, whose position and `prev` every live subscriber of a
 *   selection shares (lib/stream/delivery.ts);
 * - `lifecycle`: the `lifecycle` envelopes, for subscriptions that asked for them.
 * What differs per subscriber stays a send of its own: the rounds of a catch-up and those held
 * meanwhile, `latest` rounds, `recovered`, heartbeats (lib/stream/subscriber.ts decides when a
 * subscription joins its topic).
 *
 * Each topic is fed by one hub channel (FanOutHub.feed), made when its first subscriber joins and
 * kept until `close`: there are at most (games + types + 1) × 3 of them.
 */
import type { Delivery, FanOutHub, LifecycleEnvelopes, Selection } from './hub.ts';
import { selectionKey } from './hub.ts';

/** The wire forms a topic carries. */
export type TopicForm = 'json' | 'envelope' | 'lifecycle';

/** What the channels need of the server. */
export interface TopicServer {
  /** Sends `text` to every socket on `topic` (nothing when none). */
  publish(topic: string, text: string): void;
  /** Sockets on `topic` now. */
  members(topic: string): number;
}

/** The topic name of `selection` in `form`: `json:crash`, `envelope:multiplier`, `lifecycle:all`. */
export function topicOf(selection: Selection, form: TopicForm): string {
  return `${form}:${selectionKey(selection)}`;
}

/** The topics of one server, each fed from the hub. */
export class SharedTopics {
  private readonly fed = new Map<string, () => void>();

  /**
   * @param delivered called after each published round with the number of sockets it went to
   *   (`edge_deliveries_total`).
   */
  constructor(
    private readonly hub: FanOutHub,
    private readonly server: TopicServer,
    private readonly delivered: (sockets: number) => void,
  ) {}

  /** The topic of `selection` in `form`, fed from the hub from now on (made on first use). */
  topic(selection: Selection, form: TopicForm): string {
    const topic = topicOf(selection, form);
    if (!this.fed.has(topic)) this.fed.set(topic, this.feed(selection, form, topic));
    return topic;
  }

  /** Stops feeding every topic. */
  close(): void {
    for (const off of this.fed.values()) off();
    this.fed.clear();
  }

  private feed(selection: Selection, form: TopicForm, topic: string): () => void {
    const { server } = this;
    if (form === 'lifecycle')
      return this.hub.subscribeLifecycle({
        selection,
        lifecycle: (_u, envelopes: LifecycleEnvelopes) => {
          if (server.members(topic) > 0) server.publish(topic, envelopes.for(selection));
        },
      });
    return this.hub.feed({
      selection,
      deliver: (d: Delivery) => {
        const n = server.members(topic);
        if (n === 0) return;
        server.publish(topic, form === 'json' ? d.streamJson(selection) : d.envelope(selection));
        this.delivered(n);
      },
    });
  }
}
