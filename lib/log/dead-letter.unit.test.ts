import type { IHeaders, KafkaMessage } from 'kafkajs';
import { describe, expect, it } from 'vitest';
import { DLQ_HEADERS, deadLetterMessage } from './dead-letter.ts';

const msg = (offset: number, value: Buffer | null, headers: IHeaders = {}): KafkaMessage => ({
  key: Buffer.from('crash'),
  value,
  offset: String(offset),
  timestamp: String(Date.UTC(2026, 0, 1) + offset),
  attributes: 0,
  headers,
});

describe('deadLetterMessage', () => {
  it('keeps key, value and headers, and adds reason and origin', () => {
    const m = msg(42, Buffer.from('garbage'), { trace: 'abc' });
    const out = deadLetterMessage(
      { message: m, reason: 'bad magic byte 103' },
      { topic: 'rounds', partition: 2, projection: 'rounds' },
    );
    expect(out.key).toEqual(Buffer.from('crash'));
    expect(out.value).toEqual(Buffer.from('garbage'));
    expect(out.headers).toEqual({
      trace: 'abc',
      [DLQ_HEADERS.reason]: 'bad magic byte 103',
      [DLQ_HEADERS.topic]: 'rounds',
      [DLQ_HEADERS.partition]: '2',
      [DLQ_HEADERS.offset]: '42',
      [DLQ_HEADERS.projection]: 'rounds',
    });
  });
});
