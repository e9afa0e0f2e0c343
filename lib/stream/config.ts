/**
 * Settings of the stream core both edges share (lib/config/core.ts section, prefix `STREAM_`):
 *
 * - STREAM_CATCHUP_RATE: rounds a second one resuming subscriber is replayed at most (5000).
 * - STREAM_CATCHUP_TOTAL_RATE: rounds a second all catch-ups of one edge process replay together (50000).
 * - STREAM_CATCHUP_SLICE_MS: longest run of catch-up work before live rounds get the event loop (1 ms).
 * - STREAM_MAX_SUBSCRIPTIONS: subscriptions one WebSocket or WebTransport connection may hold with the
 *   envelope protocol (8: the four games and the four types; `all` covers everything on its own).
 */
import { int, section } from '../config/core.ts';

export const streamSection = section({
  name: 'stream',
  prefixes: ['STREAM_'],
  shape: {
    STREAM_CATCHUP_RATE: int(1, 10_000_000).default(5_000),
    STREAM_CATCHUP_TOTAL_RATE: int(1, 100_000_000).default(50_000),
    STREAM_CATCHUP_SLICE_MS: int(1, 1_000).default(1),
    STREAM_MAX_SUBSCRIPTIONS: int(1, 1_000).default(8),
  },
  build: (r) => ({
    catchUpRate: r.STREAM_CATCHUP_RATE,
    catchUpTotalRate: r.STREAM_CATCHUP_TOTAL_RATE,
    catchUpSliceMs: r.STREAM_CATCHUP_SLICE_MS,
    maxSubscriptions: r.STREAM_MAX_SUBSCRIPTIONS,
  }),
});

export type StreamConfig = ReturnType<typeof streamSection.build>;
