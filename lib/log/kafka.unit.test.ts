/**
 * The kafkajs client of createKafka without a broker: the level of kafkajs' log entries, and
 * idempotent producers made so kafkajs has no cause to warn about their retries.
 */
import { createRequire } from 'node:module';
import { logLevel } from 'kafkajs';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../tests/support/config.ts';
import { createLogger } from '../logger.ts';
import { COORDINATOR_STARTUP_ERRORS, createKafka, kafkaLogLevel } from './kafka.ts';

const config = loadConfig({ KAFKA_BROKERS: '127.0.0.1:9' });

/** A logger whose lines are kept, parsed. */
function capture() {
  const lines: { level: number; msg: string }[] = [];
  const logger = createLogger('kafka-test', 'debug', {
    write: (s: string) => void lines.push(JSON.parse(s)),
  });
  return { lines, logger };
}

describe('kafkaLogLevel', () => {
  const loading = "The coordinator is loading and hence can't process requests for this group";
  it('puts a coordinator error at debug while the client starts, at error after', () => {
    expect(kafkaLogLevel(logLevel.ERROR, loading, true)).toBe('debug');
    expect(kafkaLogLevel(logLevel.ERROR, 'The group coordinator is not available', true)).toBe('debug');
    expect(kafkaLogLevel(logLevel.ERROR, loading, false)).toBe('error');
  });
  it('keeps every other entry at its level', () => {
    expect(kafkaLogLevel(logLevel.ERROR, 'Connection error: connect ECONNREFUSED', true)).toBe('error');
    expect(kafkaLogLevel(logLevel.ERROR, undefined, true)).toBe('error');
    expect(kafkaLogLevel(logLevel.WARN, loading, true)).toBe('warn');
    expect(kafkaLogLevel(logLevel.INFO, undefined, false)).toBe('info');
    expect(kafkaLogLevel(logLevel.DEBUG, undefined, false)).toBe('debug');
  });
  it("names kafkajs' own messages of codes 14, 15 and 16", () => {
    const { errorCodes } = createRequire(import.meta.url)('kafkajs/src/protocol/error.js') as {
      errorCodes: { code: number; message: string }[];
    };
    const kafkajs = errorCodes.filter((e) => [14, 15, 16].includes(e.code)).map((e) => e.message);
    expect(new Set(kafkajs)).toEqual(COORDINATOR_STARTUP_ERRORS);
  });
});

describe('createKafka producers', () => {
  it('makes idempotent producers without the "Limiting retries" warning', () => {
    const { lines, logger } = capture();
    const kafka = createKafka(config, 'unit', logger);
    kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
    kafka.producer({ idempotent: true, maxInFlightRequests: 1, allowAutoTopicCreation: false });
    kafka.producer();
    expect(lines.map((l) => l.msg)).toEqual([]);
  });
  it('leaves a retry count the caller names to kafkajs (which warns about it)', () => {
    const { lines, logger } = capture();
    createKafka(config, 'unit', logger).producer({ idempotent: true, retry: { retries: 3 } });
    expect(lines.map((l) => l.msg)).toEqual([
      'Limiting retries for the idempotent producer may invalidate EoS guarantees',
    ]);
  });
});
