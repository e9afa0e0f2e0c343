import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';

/**
 * patches/kafkajs+2.2.4.patch (applied by patch-package at install): kafkajs's request queue asked
 * for a timer of `throttledUntil - Date.now()` ms with throttledUntil -1 when not throttled, and
 * Node >= 24 prints a TimeoutNegativeWarning for every connection (tulios/kafkajs#1751, unfixed in
 * the last release). Run in a child process, where the warning would reach stderr.
 */
describe('the installed kafkajs (patched)', () => {
  it('schedules its pending-request check without a negative timer', () => {
    const script = `
      const RequestQueue = require('kafkajs/src/network/requestQueue/index.js');
      const logger = { debug() {}, info() {}, warn() {}, error() {} };
      const q = new RequestQueue({ maxInFlightRequests: 1, requestTimeout: 1000, clientId: 't',
        broker: '127.0.0.1:9', logger, isConnected: () => true });
      q.scheduleCheckPendingRequests();
      setTimeout(() => { q.destroy(); console.log('checked'); }, 20);`;
    const r = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8', timeout: 10_000 });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout.trim()).toBe('checked');
    expect(r.stderr).not.toMatch(/TimeoutNegativeWarning/);
  });
});

/**
 * The same patch: a commit answered "This is not the correct coordinator for this group" (16),
 * "The group coordinator is not available" (15) or "The coordinator is loading" (14) makes the
 * offset manager find the group's coordinator again. Unpatched, it refreshed the metadata and kept
 * committing to the broker of the last join, reconnected by node id: on a cluster whose
 * coordinator had moved, every commit of the member failed until it rejoined. The offset manager
 * is kafkajs's own; the brokers are stand-ins answering with kafkajs's protocol errors.
 */
describe('the installed kafkajs (patched): offset commits after the coordinator moved', () => {
  const require = createRequire(import.meta.url);
  const OffsetManager = require('kafkajs/src/consumer/offsetManager/index.js');
  const { createErrorFromCode } = require('kafkajs/src/protocol/error.js');
  const { EventEmitter } = require('node:events');

  function setup(code: number) {
    const calls: string[] = [];
    const broker = (name: string, fail: boolean) => ({
      isConnected: () => true,
      async offsetCommit() {
        calls.push(name);
        if (fail) throw createErrorFromCode(code);
        return {};
      },
    });
    const stale = broker('stale', true);
    const moved = broker('moved', false);
    const cluster = {
      committedOffsets: () => ({}),
      refreshMetadata: async () => {},
      findGroupCoordinator: async ({ groupId }: { groupId: string }) => {
        calls.push(`find ${groupId}`);
        return moved;
      },
      findBroker: async () => stale, // the same node id: the broker that is no longer coordinator
    };
    const manager = new OffsetManager({
      cluster,
      coordinator: stale,
      memberAssignment: { t: [0] },
      autoCommit: false,
      topicConfigurations: {},
      instrumentationEmitter: new EventEmitter(),
      groupId: 'g',
      generationId: 1,
      memberId: 'm',
    });
    const commit = () =>
      manager.commitOffsets({ topics: [{ topic: 't', partitions: [{ partition: 0, offset: '5' }] }] });
    return { calls, commit };
  }

  for (const [code, type] of [
    [16, 'NOT_COORDINATOR_FOR_GROUP'],
    [15, 'GROUP_COORDINATOR_NOT_AVAILABLE'],
    [14, 'GROUP_LOAD_IN_PROGRESS'],
  ] as const) {
    it(`after ${type} (${code}) the next commit goes to the coordinator found again`, async () => {
      const { calls, commit } = setup(code);
      await expect(commit()).rejects.toMatchObject({ name: 'KafkaJSProtocolError', type, retriable: true });
      await commit();
      expect(calls).toEqual(['stale', 'find g', 'moved']);
    });
  }

  it('any other error keeps the coordinator', async () => {
    const { calls, commit } = setup(27); // REBALANCE_IN_PROGRESS
    await expect(commit()).rejects.toMatchObject({ type: 'REBALANCE_IN_PROGRESS' });
    await expect(commit()).rejects.toMatchObject({ type: 'REBALANCE_IN_PROGRESS' });
    expect(calls).toEqual(['stale', 'stale']);
  });
});
