/**
 * Route schemas of the ops console's API (/admin/ops/*) for /openapi.json. Inputs come from the zod
 * rules of input.ts (validated in the handlers); every error is RFC 7807 problem JSON.
 */
import { docSchema } from '../access/input.ts';
import { admin, adminErr, closed, problem } from '../access/schemas.ts';
import { rebuildBody, rebuildParams, recordsQuery, replayBody, topicParams } from './input.ts';

const TAGS = ['ops-console'];
const str = { type: 'string' } as const;
const int = { type: 'integer' } as const;
const nullableStr = { type: 'string', nullable: true } as const;
const nullableInt = { type: 'integer', nullable: true } as const;
const ints = { type: 'array', items: int } as const;
const unavailable = problem('The Kafka brokers (or Postgres) cannot be reached; nothing was done.');

const partition = closed({
  partition: int,
  leader: { type: 'integer', description: 'Broker id of the leader (-1: none).' },
  replicas: ints,
  isr: { ...ints, description: 'In-sync replicas.' },
  high_water_mark: { type: 'integer', description: 'Next offset to be written.' },
  low_water_mark: { type: 'integer', description: 'First retained offset.' },
});
const topic = closed({ name: str, partitions: { type: 'array', items: partition } });

const groupPartition = closed({
  partition: int,
  committed_offset: { ...nullableInt, description: 'Next offset the group will read; null: none committed.' },
  high_water_mark: int,
  lag: {
    type: 'integer',
    description: 'high_water_mark − committed_offset (high − low watermark without a commit).',
  },
});
const group = closed({
  group_id: str,
  state: { type: 'string', description: 'Stable, Empty, PreparingRebalance, CompletingRebalance, Dead.' },
  members: int,
  total_lag: int,
  topics: {
    type: 'array',
    items: closed({ topic: str, partitions: { type: 'array', items: groupPartition } }),
  },
});

const deadLetterTopic = closed({
  name: { type: 'string', description: 'Short name, usable in the paths (rounds, wallet).' },
  topic: str,
  source_topic: { type: 'string', description: 'Where a replay re-appends a record.' },
  count: { type: 'integer', description: 'Retained records (0 when the topic does not exist yet).' },
  exists: { type: 'boolean' },
});
const at = closed({ topic: nullableStr, partition: nullableInt, offset: nullableInt });
const deadLetter = closed({
  partition: int,
  offset: int,
  key: nullableStr,
  timestamp: { type: 'string', format: 'date-time' },
  headers: { type: 'object', additionalProperties: { type: 'string' } },
  reason: nullableStr,
  source: at,
  value: {
    description:
      'The value decoded with the current schemas (JSON; 64-bit integers as strings), or its bytes in base64.',
    nullable: true,
  },
  value_encoding: { type: 'string', enum: ['json', 'base64'] },
  decode_error: nullableStr,
  replays: {
    type: 'array',
    items: closed({
      to: closed({ topic: str, partition: int, offset: int }),
      at: { type: 'string', format: 'date-time' },
    }),
  },
});
const position = closed({ partition: int, offset: int });

const rebuild = closed({
  rebuild_id: str,
  read_model: str,
  state: {
    type: 'string',
    enum: ['running', 'caught-up', 'swapping', 'swapped', 'failed'],
    description:
      'running: replaying and following the live projector; caught-up: checked equal to the live tables, waiting for POST …/swap; swapping: swap asked; swapped; failed (see error).',
  },
  progress: closed({
    replayed: { type: 'integer', description: 'Offsets replayed into the shadow tables.' },
    target: { type: 'integer', description: 'Offsets up to the live position being replayed towards.' },
    step: nullableStr,
  }),
  started_at: { type: 'string', format: 'date-time' },
  finished_at: { type: 'string', format: 'date-time', nullable: true },
  error: { ...closed({ code: str, message: str }), nullable: true },
  result: {
    ...closed({
      records: int,
      events: int,
      skipped: int,
      replay_ms: int,
      locked_ms: int,
      identical_after_swap: { type: 'boolean', nullable: true },
      retired_schema: nullableStr,
    }),
    nullable: true,
  },
});

const subscribers = {
  ...closed(
    { websocket: int, sse: int, grpc: int, webtransport: int },
    'Open subscriptions per protocol (edge_subscribers); null when /metrics could not be read.',
  ),
  nullable: true,
};
const edge = closed({
  url: str,
  ready: { type: 'boolean', description: 'GET /ready answered 200.' },
  status: nullableStr,
  subscribers,
  error: {
    ...nullableStr,
    description: 'Why it is not ready or has no metrics (unreachable, timeout, status).',
  },
});

export const opsSchemas = {
  topics: {
    tags: TAGS,
    summary: 'Topics and partitions (admin)',
    description:
      "The platform's topics in this namespace that exist on the broker, each partition with leader, replicas, in-sync replicas and low and high watermarks.",
    security: admin,
    response: { 200: closed({ topics: { type: 'array', items: topic } }), ...adminErr, 503: unavailable },
  },
  groups: {
    tags: TAGS,
    summary: 'Consumer groups and their lag (admin)',
    description:
      "Consumer groups that committed offsets on the platform's topics, with state, members and lag per partition (high-water mark − committed offset).",
    security: admin,
    response: { 200: closed({ groups: { type: 'array', items: group } }), ...adminErr, 503: unavailable },
  },
  deadLetters: {
    tags: TAGS,
    summary: 'Dead-letter topics (admin)',
    description: 'Each dead-letter topic with the topic its records came from and how many it retains.',
    security: admin,
    response: {
      200: closed({ topics: { type: 'array', items: deadLetterTopic } }),
      ...adminErr,
      503: unavailable,
    },
  },
  deadLetterRecords: {
    tags: TAGS,
    summary: 'Records of a dead-letter topic (admin)',
    description:
      'Records in (partition, offset) order with headers, reason, source, the decoded value and earlier replays. `topic`: the short name (rounds, wallet), or the topic name with or without the namespace.',
    security: admin,
    params: docSchema(topicParams),
    querystring: docSchema(recordsQuery),
    response: {
      200: closed({ records: { type: 'array', items: deadLetter } }),
      ...adminErr,
      404: problem('No dead-letter topic of that name.'),
      503: unavailable,
    },
  },
  replay: {
    tags: TAGS,
    summary: 'Replay dead-letter records (admin)',
    description:
      'Re-appends the named records to their source topic (same key and value, the original headers plus replayed-from) and records each replay in the ledger topic dead-letters.replays. A record replayed before, or whose value still does not decode, is reported and not appended again.',
    security: admin,
    params: docSchema(topicParams),
    body: docSchema(replayBody),
    response: {
      200: closed({
        topic: str,
        target: str,
        replayed: {
          type: 'array',
          items: closed({ partition: int, offset: int, to: position }),
        },
        already_replayed: {
          type: 'array',
          items: closed({ partition: int, offset: int, at: { type: 'string', format: 'date-time' } }),
        },
        undecodable: { type: 'array', items: closed({ partition: int, offset: int, reason: str }) },
      }),
      ...adminErr,
      404: problem(
        'No dead-letter topic of that name, or no record at the positions named; nothing appended.',
      ),
      503: unavailable,
    },
  },
  startRebuild: {
    tags: TAGS,
    summary: 'Start a read-model rebuild (admin)',
    description:
      'Rebuilds the read model from the log into shadow tables while the live projector runs, follows it and checks the result; then waits for POST /admin/ops/rebuilds/{id}/swap. Runs in the background of this API process.',
    security: admin,
    body: docSchema(rebuildBody),
    response: {
      202: rebuild,
      ...adminErr,
      409: problem('A rebuild of this read model is already running (here or elsewhere).'),
    },
  },
  rebuilds: {
    tags: TAGS,
    summary: 'Read-model rebuilds of this API process (admin)',
    description: 'Every rebuild started here since the process started, newest first.',
    security: admin,
    response: { 200: closed({ rebuilds: { type: 'array', items: rebuild } }), ...adminErr },
  },
  rebuild: {
    tags: TAGS,
    summary: 'One read-model rebuild (admin)',
    description: 'State and progress of a rebuild.',
    security: admin,
    params: docSchema(rebuildParams),
    response: { 200: rebuild, ...adminErr, 404: problem('No such rebuild in this API process.') },
  },
  swap: {
    tags: TAGS,
    summary: 'Swap a caught-up rebuild in (admin)',
    description:
      'Swaps the rebuilt tables in for the live ones in one locked transaction, then compares them row by row as of the swap; answers when done (or after 30 s, state swapping).',
    security: admin,
    params: docSchema(rebuildParams),
    response: {
      200: rebuild,
      ...adminErr,
      404: problem('No such rebuild in this API process.'),
      409: problem('The rebuild is not caught-up (still running, swapped or failed).'),
    },
  },
  edges: {
    tags: TAGS,
    summary: 'Edges and their subscribers (admin)',
    description:
      'Each edge of OPS_EDGE_URLS: its /ready verdict and open subscriptions per protocol from /metrics. An edge that does not answer within the bound is listed with ready false and the error.',
    security: admin,
    response: { 200: closed({ edges: { type: 'array', items: edge } }), ...adminErr },
  },
} as const;
