import { setTimeout as sleep } from 'node:timers/promises';
import { credentials, makeClientConstructor, type ServiceDefinition, status } from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Delivery } from '../../../../lib/stream/hub.ts';
import { startTestGrpc, type TestGrpc, track } from '../../../../tests/support/grpc.ts';
import { until } from '../../../../tests/support/poll.ts';
import { deliveryOf, mkRound } from '../../../../tests/support/rounds-fixture.ts';
import {
  type DataStreamClient,
  encodeRoundMsg,
  loadDataStream,
  type RoundMsg,
  SERVICE_NAME,
} from './proto.ts';

const LIMIT = 64 * 1024;
let t: TestGrpc;

beforeAll(async () => {
  t = await startTestGrpc({ overrides: { GRPC_MAX_BUFFER_BYTES: LIMIT } });
});
afterAll(async () => {
  await t?.close();
});

/** A client on a connection of its own: HTTP/2 flow control is per connection as well as per stream. */
function ownConnectionClient(): DataStreamClient {
  const Ctor = makeClientConstructor(loadDataStream()[SERVICE_NAME] as ServiceDefinition, SERVICE_NAME);
  return new Ctor(t.transport.address, credentials.createInsecure(), {
    'grpc.use_local_subchannel_pool': 1,
  }) as unknown as DataStreamClient;
}

const counter = async (m: 'slowCloses' | 'deliveries') =>
  (await t.metrics[m].get()).values.find((v) => v.labels.protocol === 'grpc')?.value ?? 0;

describe('gRPC slow subscriber', () => {
  it('ends a stream that stops reading with RESOURCE_EXHAUSTED while another gets every round', async () => {
    const slowClient = ownConnectionClient();
    const slow = track(slowClient.StreamAll({}));
    const fast = track(t.client.StreamAll({}));
    await Promise.all([slow.started, fast.started]);
    slow.call.pause(); // stops reading: its HTTP/2 window fills, then the server's queue grows

    // Rounds arrive in batches of 20 every 10 ms (2,000/s, far above the games' pace but within
    // what one grpc-js stream flushes, ~5,000/s here): a reader that keeps up never nears the limit.
    const published: Delivery[] = [];
    let seq = 0;
    while ((await counter('slowCloses')) === 0 && seq < 20_000) {
      for (let i = 0; i < 20; i++) {
        const d = deliveryOf(mkRound('crash', ++seq, (1 + (seq % 900) / 100).toFixed(2)), seq);
        t.hub.publish(d);
        published.push(d);
      }
      await sleep(10);
    }
    expect(await counter('slowCloses')).toBe(1);
    expect(t.hub.size).toBe(1); // the slow stream's subscription is gone, the fast one remains
    // The slow stream was cut once its unflushed bytes passed the limit: what it was handed fits
    // in the limit plus the HTTP/2 windows (stream and connection, 64 KiB each) and a few frames
    // on their way through the session (two more than that on Node 24), not everything.
    const slowWrites = (await counter('deliveries')) - published.length;
    const frameBytes = encodeRoundMsg(published[0]?.streamForm({ kind: 'all' }) as RoundMsg).length + 5;
    expect(slowWrites).toBeLessThan(published.length);
    expect(slowWrites * frameBytes).toBeLessThanOrEqual(LIMIT + 2 * 65_535 + 4 * frameBytes);

    // Ten more rounds after the cut: only the fast stream gets them.
    for (let i = 0; i < 10; i++) {
      const d = deliveryOf(mkRound('crash', ++seq, '2.00'), seq);
      t.hub.publish(d);
      published.push(d);
    }
    const got = await fast.waitFor(published.length);
    expect(got.map((m) => m.round_id)).toEqual(published.map((d) => d.round.round_id));

    // Once it reads again, the slow client sees what was flushed before the reset, then the status.
    slow.call.resume();
    const err = await slow.ended;
    expect(err.code).toBe(status.RESOURCE_EXHAUSTED);
    expect(slow.messages.length).toBeLessThan(published.length);
    expect(slow.messages.map((m) => m.round_id)).toEqual(
      published.slice(0, slow.messages.length).map((d) => d.round.round_id),
    );
    fast.call.cancel();
    slowClient.close();
    await until(() => t.hub.size === 0, 5000, 'fast stream removed');
  });
});
