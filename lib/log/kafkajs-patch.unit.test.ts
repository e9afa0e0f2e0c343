import { spawnSync } from 'node:child_process';
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
