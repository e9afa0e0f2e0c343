/**
 * gRPC health through reflection (finding 8): grpcurl, with no .proto at hand,
 * lists the services and calls grpc.health.v1.Health/Check (server and datastream.DataStream) on a
 * real edge. grpcurl is the Go tool (scripts/ensure-test-tools.sh installs it into .cache/go/bin,
 * which `npm test` runs first). Before the fix, reflection described the health file with a map
 * entry Go's protobuf refuses, and every call failed with "invalid map".
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Edge } from '../../services/edge/edge.ts';
import { createTestLog, startEdge, type TestLog } from '../support/edge.ts';
import { ROOT } from '../support/processes.ts';
import { portsOf } from '../support/stream-clients.ts';

const run = promisify(execFile);
const GRPCURL = join(ROOT, '.cache', 'go', 'bin', 'grpcurl');

let log: TestLog;
let edge: Edge;
let target = '';

beforeAll(async () => {
  if (!existsSync(GRPCURL)) throw new Error(`${GRPCURL} missing: run bash scripts/ensure-test-tools.sh`);
  log = await createTestLog();
  edge = await startEdge(log, undefined, { requireGrpc: false });
  target = `127.0.0.1:${portsOf(edge).grpc}`;
});
afterAll(async () => {
  await edge?.stop(0);
  await log?.close();
});

/** grpcurl's output; asynchronous, so the in-process server keeps answering. */
async function grpcurl(...args: string[]): Promise<string> {
  const { stdout } = await run(GRPCURL, ['-plaintext', '-max-time', '10', ...args]);
  return stdout;
}

describe('grpcurl through server reflection, no proto file', () => {
  it('lists both services', async () => {
    const out = await grpcurl(target, 'list');
    expect(out.split('\n')).toEqual(
      expect.arrayContaining(['datastream.DataStream', 'grpc.health.v1.Health']),
    );
  });

  it('calls grpc.health.v1.Health/Check for the server and for datastream.DataStream', async () => {
    expect(JSON.parse(await grpcurl(target, 'grpc.health.v1.Health/Check'))).toEqual({ status: 'SERVING' });
    const svc = await grpcurl(
      '-d',
      '{"service":"datastream.DataStream"}',
      target,
      'grpc.health.v1.Health/Check',
    );
    expect(JSON.parse(svc)).toEqual({ status: 'SERVING' });
  });

  it('describes the health service and still calls DataStream by reflection', async () => {
    expect(await grpcurl(target, 'describe', 'grpc.health.v1.Health')).toMatch(/rpc Check/);
    const games = JSON.parse(await grpcurl(target, 'datastream.DataStream/ListGames')) as {
      games: unknown[];
    };
    expect(games.games.length).toBe(4);
  });
});
