/**
 * Waits until the configured broker (KAFKA_BROKERS through lib/config/shared.ts) answers a metadata
 * request, which is what clients need; an open port alone is not enough because a KRaft broker
 * listens before it has caught up with the controller.
 *
 * Usage: `tsx scripts/wait-kafka.ts [--timeout-ms 60000] [--brokers N]`. With `--brokers N`, ready
 * also means the cluster lists at least N brokers (every node of a local cluster registered, so a
 * topic of replication N can be created). Exit 0 when ready, 1 on timeout or bad arguments
 * (message on stderr).
 */
import { Kafka, logLevel } from 'kafkajs';
import { configLoader } from '../lib/config/core.ts';
import { kafkaSection } from '../lib/config/shared.ts';

const DEFAULT_TIMEOUT_MS = 60_000;
const ATTEMPT_PAUSE_MS = 500;

/**
 * Parses `--timeout-ms N` (milliseconds, 1..600000) and `--brokers N` (1..64, default 1).
 * @throws Error on anything else.
 */
function parseArgs(argv: readonly string[]): { timeoutMs: number; minBrokers: number } {
  let timeoutMs = DEFAULT_TIMEOUT_MS;
  let minBrokers = 1;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--timeout-ms') {
      const n = Number(argv[++i]);
      if (!Number.isInteger(n) || n < 1 || n > 600_000) {
        throw new Error('--timeout-ms needs an integer between 1 and 600000');
      }
      timeoutMs = n;
    } else if (arg === '--brokers') {
      const n = Number(argv[++i]);
      if (!Number.isInteger(n) || n < 1 || n > 64)
        throw new Error('--brokers needs an integer between 1 and 64');
      minBrokers = n;
    } else {
      throw new Error(`unknown argument ${arg}; usage: wait-kafka.ts [--timeout-ms N] [--brokers N]`);
    }
  }
  return { timeoutMs, minBrokers };
}

/**
 * Polls `listTopics` (and the cluster's broker list) until it succeeds with at least `minBrokers`
 * brokers, or `timeoutMs` passes.
 * @returns the topic count on success. @throws Error with the last failure on timeout.
 */
async function waitForKafka(
  brokers: readonly string[],
  timeoutMs: number,
  minBrokers: number,
): Promise<number> {
  // No retries inside kafkajs: this loop owns the deadline, and failures while the broker boots are expected.
  const kafka = new Kafka({
    clientId: 'wait-kafka',
    brokers: [...brokers],
    logLevel: logLevel.NOTHING,
    connectionTimeout: 2_000,
    requestTimeout: 5_000,
    retry: { retries: 0 },
  });
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  while (Date.now() < deadline) {
    const admin = kafka.admin();
    try {
      await admin.connect();
      const topics = await admin.listTopics();
      const listed = (await admin.describeCluster()).brokers.length;
      if (listed >= minBrokers) return topics.length;
      lastError = new Error(`${listed} of ${minBrokers} brokers registered`);
    } catch (err) {
      lastError = err;
    } finally {
      await admin.disconnect().catch(() => {});
    }
    await new Promise((r) => setTimeout(r, ATTEMPT_PAUSE_MS));
  }
  const reason = lastError instanceof Error ? lastError.message : String(lastError);
  throw new Error(`broker ${brokers.join(',')} not ready after ${timeoutMs} ms: ${reason}`);
}

async function main(): Promise<void> {
  const { timeoutMs, minBrokers } = parseArgs(process.argv.slice(2));
  const config = configLoader([kafkaSection])();
  const count = await waitForKafka(config.kafka.brokers, timeoutMs, minBrokers);
  console.log(`kafka ${config.kafka.brokers.join(',')} ready (${count} topics)`);
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : String(err));
  process.exit(1);
});
