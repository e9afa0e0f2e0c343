/**
 * Input rules of the ops console's routes, as zod schemas validated in the handlers (strict: an
 * unknown field or query parameter is a 400 naming it, services/api/access/input.ts parseInput) and,
 * converted, describing the routes in /openapi.json.
 */
import { z } from 'zod';
import { READ_MODEL_NAMES } from './rebuilds.ts';

/** Most records one page or one replay names. */
export const MAX_RECORDS = 1000;

/** A Kafka topic name: at most 249 of [a-zA-Z0-9._-] (the broker's own rule). */
export const topicParams = z
  .object({
    topic: z
      .string()
      .min(1)
      .max(249)
      .regex(/^[a-zA-Z0-9._-]+$/, 'must be a topic name ([a-zA-Z0-9._-], at most 249)'),
  })
  .strict();

/** Query of GET /admin/ops/dead-letters/:topic. */
export const recordsQuery = z
  .object({
    limit: z
      .string()
      .max(4)
      // Exactly 1..1000, so the pattern in /openapi.json states the whole rule.
      .regex(/^(?:[1-9][0-9]{0,2}|1000)$/, `must be an integer from 1 to ${MAX_RECORDS}`)
      .transform(Number)
      .pipe(z.number().int().min(1).max(MAX_RECORDS))
      .default(100)
      .meta({ description: `Most records to return (1..${MAX_RECORDS}, default 100).` }),
    after: z
      .string()
      .max(40)
      .regex(/^[0-9]{1,9}:[0-9]{1,19}$/, 'must be <partition>:<offset>')
      .transform((s) => {
        const [p, o] = s.split(':');
        return { partition: Number(p), offset: Number(o) };
      })
      .optional()
      .meta({
        description:
          'Position of the last record of the previous page, `<partition>:<offset>`: records after it in (partition, offset) order.',
      }),
  })
  .strict();

/** A record's place in a topic. */
const position = z
  .object({
    partition: z.number().int().min(0).max(1_000_000),
    offset: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER),
  })
  .strict();

/** Body of POST /admin/ops/dead-letters/:topic/replay. */
export const replayBody = z
  .object({ records: z.array(position).min(1).max(MAX_RECORDS) })
  .strict()
  .meta({ description: 'The dead-letter records to replay, by partition and offset.' });

/** Body of POST /admin/ops/rebuilds. */
export const rebuildBody = z.object({ read_model: z.enum(READ_MODEL_NAMES) }).strict();

/** Path of the rebuild routes. */
export const rebuildParams = z
  .object({
    id: z
      .string()
      .max(64)
      .regex(/^rb_[0-9a-f-]{36}$/, 'must be a rebuild id (rb_ and a UUID)'),
  })
  .strict();
