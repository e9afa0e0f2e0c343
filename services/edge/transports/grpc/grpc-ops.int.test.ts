import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import {
  type Client,
  credentials,
  type GrpcObject,
  loadPackageDefinition,
  type ServiceClientConstructor,
  status,
} from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';
import { protoPath as healthProtoPath } from 'grpc-health-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGrpc, type TestGrpc, track, unary } from '../../../../tests/support/grpc.ts';
import { until } from '../../../../tests/support/poll.ts';
import { deliveryOf, mkRound } from '../../../../tests/support/rounds-fixture.ts';
import { LOADER_OPTIONS } from './proto.ts';

// The reflection .protos that @grpc/reflection itself serves (grpcurl asks v1, older ones v1alpha).
const reflectionProto = (v: string) =>
  join(
    dirname(createRequire(import.meta.url).resolve('@grpc/reflection')),
    '..',
    `proto/grpc/reflection/${v}/reflection.proto`,
  );

function clientOf(protoPath: string, name: string, address: string): Client {
  const pkg = loadPackageDefinition(loadSync(protoPath, LOADER_OPTIONS));
  const Ctor = name
    .split('.')
    .reduce((o: GrpcObject, k) => o[k] as GrpcObject, pkg) as unknown as ServiceClientConstructor;
  return new Ctor(address, credentials.createInsecure());
}

type Call = (req: unknown, md: never, opts: never, cb: (e: Error | null, r?: unknown) => void) => void;

// No database: ListGames falls back to the hub, GetHistory is unavailable.
let t: TestGrpc;
beforeAll(async () => {
  t = await startTestGrpc();
});
afterAll(async () => {
  await t?.close();
});

describe('gRPC server reflection and health', () => {
  it.each(['v1', 'v1alpha'])(
    'reflection %s lists DataStream and the health service, and describes DataStream',
    async (v) => {
      const c = clientOf(reflectionProto(v), `grpc.reflection.${v}.ServerReflection`, t.transport.address);
      const call = (
        c as unknown as { ServerReflectionInfo: () => NodeJS.ReadWriteStream }
      ).ServerReflectionInfo();
      const replies: Record<string, { service?: { name: string }[]; file_descriptor_proto?: Buffer[] }>[] =
        [];
      const done = new Promise<void>((resolve, reject) => {
        call.on('data', (m) => {
          replies.push(m);
          if (replies.length === 2) resolve();
        });
        call.on('error', reject);
      });
      call.write({ list_services: '' } as never);
      call.write({ file_containing_symbol: 'datastream.DataStream' } as never);
      await done;
      call.end();
      c.close();
      const names = replies[0]?.list_services_response?.service?.map((s) => s.name);
      expect(names).toEqual(expect.arrayContaining(['datastream.DataStream', 'grpc.health.v1.Health']));
      const fd = replies[1]?.file_descriptor_response?.file_descriptor_proto?.[0];
      expect(fd && Buffer.from(fd).toString('latin1')).toContain('StreamByGame');
    },
  );

  it('reports SERVING for the server and for datastream.DataStream', async () => {
    const c = clientOf(healthProtoPath, 'grpc.health.v1.Health', t.transport.address);
    const check = (c as unknown as { Check: Call }).Check.bind(c);
    expect(await unary(check as never, { service: '' })).toEqual({ status: 'SERVING' });
    expect(await unary(check as never, { service: 'datastream.DataStream' })).toEqual({ status: 'SERVING' });
    await expect(unary(check as never, { service: 'other' })).rejects.toMatchObject({
      code: status.NOT_FOUND,
    });
    c.close();
  });
});

describe('gRPC without the read-model database', () => {
  it('ListGames takes last_round and last_update from the hub', async () => {
    const r = mkRound('slot', 42, '3.00');
    t.hub.publish(deliveryOf(r));
    const { games } = await unary(t.client.ListGames.bind(t.client), {});
    expect(games.find((g) => g.slug === 'slot')).toEqual({
      id: 3,
      slug: 'slot',
      name: 'Slot Machine',
      type: 'slots',
      last_round: r.round_id,
      last_update: new Date(r.finished_at).toISOString(),
    });
    expect(games.find((g) => g.slug === 'crash')).toEqual({
      id: 1,
      slug: 'crash',
      name: 'Crash',
      type: 'multiplier',
    });
  });

  it('GetHistory is UNAVAILABLE, after checking its input', async () => {
    const h = t.client.GetHistory.bind(t.client);
    await expect(unary(h, { game_slug: 'crash' })).rejects.toMatchObject({ code: status.UNAVAILABLE });
    await expect(unary(h, { game_slug: 'crash', limit: 0 })).rejects.toMatchObject({
      code: status.INVALID_ARGUMENT,
    });
  });
});

describe('gRPC shutdown', () => {
  it('ends open streams with UNAVAILABLE over the drain window and refuses new calls', async () => {
    const own = await startTestGrpc();
    const streams = [0, 1, 2].map(() => track(own.client.StreamAll({})));
    await Promise.all(streams.map((s) => s.started));
    expect(own.transport.openStreams).toBe(3);
    const started = Date.now();
    await own.transport.stop(300);
    const took = Date.now() - started;
    const errs = await Promise.all(streams.map((s) => s.ended));
    expect(errs.map((e) => [e.code, e.details])).toEqual(
      Array(3).fill([status.UNAVAILABLE, 'server shutting down']),
    );
    expect(took).toBeLessThan(300 + 1000); // finished without the forced close
    await until(() => own.hub.size === 0, 2000, 'hub emptied');
    const after = track(own.client.StreamAll({}));
    expect((await after.ended).code).toBe(status.UNAVAILABLE);
    await own.close();
  });
});
