/**
 * POST /api/rounds (scope publish:rounds, issue 4 item 6): an external game server appends a
 * validated RoundFinished to `rounds` (record key = game slug, idempotent producer, acks from all
 * in-sync replicas). Idempotent on (game, round_id): the same round again → 200 `duplicate: true`
 * with nothing appended; different data under the same id → 409. A repeat is recognised from the
 * rounds read model, or, before the projector has caught up, from this process's memory of the
 * last 10000 rounds it appended. Two API nodes receiving the same new round within the projector's
 * lag can both append it; the projector keeps the first (`on conflict do nothing`).
 */
import { isDeepStrictEqual } from 'node:util';
import type { FastifyPluginAsync } from 'fastify';
import type { Producer } from 'kafkajs';
import type { Sql } from '../../../lib/db/pool.ts';
import { encodeRound } from '../../../lib/log/rounds-codec.ts';
import { topicName } from '../../../lib/log/topics.ts';
import { extrasOf, type RoundFinished, roundValue } from '../../../rules/rounds/round.ts';
import type { ApiConfig } from '../config.ts';
import { ConflictError, InvalidInputError } from '../errors.ts';
import { parseRoundPost } from './input.ts';
import { postRoundBody } from './schema.ts';

const RECENT_MAX = 10_000;

const err = (description: string) => ({ $ref: 'ErrorBody#', description }) as const;
const postRoundSchema = {
  tags: ['rounds'],
  summary: 'Append a finished round from an external game server (scope publish:rounds).',
  body: postRoundBody,
  response: {
    200: {
      type: 'object',
      description: 'Already recorded with the same data; nothing appended.',
      properties: { success: { type: 'boolean' }, duplicate: { type: 'boolean', enum: [true] } },
    },
    201: {
      type: 'object',
      properties: { success: { type: 'boolean' }, duplicate: { type: 'boolean', enum: [false] } },
    },
    400: err('Invalid round.'),
    401: err('Missing or invalid credential.'),
    403: err('Credential without publish:rounds.'),
    409: err('Another round is recorded under this game and round_id.'),
  },
} as const;

/** The comparable content of a round. */
function fingerprint(r: RoundFinished) {
  return { finished_at: r.finished_at, value: roundValue(r.result), extras: extrasOf(r.result) };
}

export function ingestRoutes(deps: {
  config: Pick<ApiConfig, 'kafka'>;
  sql: Sql;
  producer: Producer;
}): FastifyPluginAsync {
  const recent = new Map<string, ReturnType<typeof fingerprint>>();
  const stored = async (r: RoundFinished) => {
    const key = `${r.game_id}:${r.round_id}`;
    const mem = recent.get(key);
    if (mem) return mem;
    const rows = await deps.sql<{ value: string; extras: string; finished_at: Date }[]>`
      select value, extras::text as extras, finished_at from rounds
      where game_id = ${r.game_id} and round_id = ${r.round_id}`;
    const row = rows[0];
    return (
      row && { finished_at: row.finished_at.getTime(), value: row.value, extras: JSON.parse(row.extras) }
    );
  };

  return async (app) => {
    // The schema (schema.ts) is enforced by the app's strict ajv; input.ts converts the body.
    app.post('/api/rounds', { schema: postRoundSchema }, async (req, reply) => {
      const parsed = parseRoundPost(req.body);
      if (!parsed.ok) throw new InvalidInputError('INVALID_ROUND', parsed.error);
      const round = parsed.value;
      const fp = fingerprint(round);
      const prior = await stored(round);
      if (prior) {
        if (!isDeepStrictEqual(prior, fp)) {
          throw new ConflictError(
            'ROUND_CONFLICT',
            `round ${round.round_id} of ${round.game_slug} is already recorded with other data`,
          );
        }
        return reply.code(200).send({ success: true, duplicate: true });
      }
      const key = `${round.game_id}:${round.round_id}`;
      recent.set(key, fp);
      try {
        await deps.producer.send({
          topic: topicName(deps.config, 'rounds'),
          acks: -1,
          messages: [{ key: round.game_slug, value: encodeRound(round) }],
        });
      } catch (e) {
        recent.delete(key);
        throw e;
      }
      if (recent.size > RECENT_MAX) recent.delete(recent.keys().next().value as string);
      return reply.code(201).send({ success: true, duplicate: false });
    });
  };
}
