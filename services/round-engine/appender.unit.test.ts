import { describe, expect, it } from 'vitest';
import { needsNewProducer } from './appender.ts';

describe('needsNewProducer', () => {
  it('asks for a new producer when the broker lost the idempotent state or the producer disconnected', () => {
    expect(needsNewProducer({ type: 'UNKNOWN_PRODUCER_ID' })).toBe(true);
    expect(
      needsNewProducer(new Error('retries exceeded', { cause: { type: 'OUT_OF_ORDER_SEQUENCE_NUMBER' } })),
    ).toBe(true);
    expect(
      needsNewProducer({
        name: 'KafkaJSNumberOfRetriesExceeded',
        originalError: { type: 'INVALID_PRODUCER_EPOCH' },
      }),
    ).toBe(true);
    expect(needsNewProducer(new Error('The producer is disconnected'))).toBe(true);
  });

  it('keeps the producer (same id and sequence, so the broker drops a late duplicate) for connection errors', () => {
    expect(needsNewProducer(new Error('Connection error: connect ECONNREFUSED 127.0.0.1:19092'))).toBe(false);
    expect(needsNewProducer({ type: 'NOT_LEADER_FOR_PARTITION' })).toBe(false);
    expect(needsNewProducer(null)).toBe(false);
  });
});
