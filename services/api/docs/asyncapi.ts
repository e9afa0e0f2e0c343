/**
 * The AsyncAPI 3.1 document of the platform's event interfaces, served at GET /asyncapi.json: every
 * stream a subscriber can open (WebSocket, SSE, WebTransport, gRPC streams), their messages (the stream
 * form of a round, the opt-in envelopes, lifecycle events, positions, client commands), and every topic
 * of the log with the Avro schemas of its records. Built from the code's own registries (the game
 * catalog, lib/log/topics.ts, schemas/registry.json, lib/stream's forms), so it cannot list a topic,
 * game or schema the code does not have; validated by @asyncapi/parser in the tests
 * (services/api/docs/documents.unit.test.ts). docs/contract.md explains it in words.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { APP_ROOT } from '../../../lib/config/core.ts';
import { TOPICS } from '../../../lib/log/topics.ts';
import { MAX_POSITION_LENGTH } from '../../../lib/stream/position.ts';
import { GAME_SLUGS, GAME_TYPES } from '../../../rules/games/catalog.ts';
import { API_VERSION } from '../openapi.ts';

/** Media type of an Avro schema in AsyncAPI's Multi Format Schema Object. */
export const AVRO_FORMAT = 'application/vnd.apache.avro+json;version=1.9.0';

interface RegistryEntry {
  readonly id: number;
  readonly subject: string;
  readonly name: string;
  readonly version: number;
  readonly file: string;
}

/** The newest schema of each subject in schemas/registry.json (what producers write). */
function latestSchemas(): RegistryEntry[] {
  const reg = JSON.parse(readFileSync(join(APP_ROOT, 'schemas', 'registry.json'), 'utf8')) as {
    schemas: RegistryEntry[];
  };
  const latest = new Map<string, RegistryEntry>();
  for (const s of reg.schemas) {
    const cur = latest.get(s.subject);
    if (!cur || s.version > cur.version) latest.set(s.subject, s);
  }
  return [...latest.values()].sort((a, b) => a.id - b.id);
}

/** The record name's last part (`casino.rounds.RoundFinished` → RoundFinished). */
const shortName = (full: string) => full.slice(full.lastIndexOf('.') + 1);

const ISO = { type: 'string', format: 'date-time' } as const;

/** The seed's stream form of a finished round, field for field. */
const streamRound = {
  type: 'object',
  additionalProperties: false,
  required: ['round_id', 'game_id', 'game_slug', 'game_type', 'finished_at', 'extras', 'timestamp'],
  properties: {
    round_id: { type: 'integer', description: 'game_id × 10^12 + sequence' },
    game_id: { type: 'integer' },
    game_slug: { type: 'string', enum: [...GAME_SLUGS] },
    game_type: { type: 'string', enum: [...GAME_TYPES] },
    finished_at: ISO,
    extras: {
      type: 'string',
      description:
        'JSON text: crash {point}, double {color, number}, slot {reels, multiplier}, wall-street {trending}.',
    },
    timestamp: { type: 'integer', description: 'Unix ms the round was appended to the log.' },
  },
};

const position = {
  type: 'string',
  maxLength: MAX_POSITION_LENGTH,
  pattern: '^t=[0-9]+(;[a-z0-9-]+=[0-9]+)*$',
  description:
    'Where to resume: t=<unix ms> and the last round id given of each game of the subscription (docs/contract.md "Positions").',
};

const lifecycle = {
  oneOf: [
    {
      type: 'object',
      required: [
        'event',
        'game_slug',
        'game_id',
        'round_id',
        'betting_opens_at',
        'betting_closes_at',
        'commitment',
      ],
      properties: {
        event: { const: 'round-opened' },
        game_slug: { type: 'string' },
        game_id: { type: 'integer' },
        round_id: { type: 'integer' },
        betting_opens_at: ISO,
        betting_closes_at: ISO,
        commitment: { type: 'string', pattern: '^[0-9a-f]{64}$' },
        chain_epoch: { type: 'integer' },
        chain_index: { type: 'integer' },
        speed: { type: 'number' },
        timestamp: { type: 'integer' },
      },
    },
    {
      type: 'object',
      required: ['event', 'game_slug', 'game_id', 'round_id', 'at'],
      properties: {
        event: { const: 'betting-closed' },
        game_slug: { type: 'string' },
        game_id: { type: 'integer' },
        round_id: { type: 'integer' },
        at: ISO,
        timestamp: { type: 'integer' },
      },
    },
  ],
};

const recovered = {
  type: 'object',
  required: ['recovered', 'since', 'replayed'],
  properties: {
    recovered: {
      type: 'boolean',
      description: 'True when a position was given and every round after it was delivered.',
    },
    since: { type: ['string', 'null'] },
    replayed: { type: 'integer' },
    reason: { type: 'string' },
  },
};

/** One envelope type (`envelope=1`, gRPC StreamRoundEvents). */
const envelope = (type: string, data: unknown, extra: Record<string, unknown> = {}) => ({
  type: 'object',
  required: ['type', 'sub', 'position', 'data'],
  properties: {
    type: { const: type },
    sub: { type: ['string', 'null'], description: 'game:<slug>, type:<type> or all' },
    position: type === 'error' ? { type: 'null' } : position,
    data,
    ...extra,
  },
});

const gameParam = { enum: [...GAME_SLUGS], description: 'A game slug.' };
const typeParam = { enum: [...GAME_TYPES], description: 'A game type: multiplier = crash and slot.' };

const msg = (name: string, summary: string, payload: unknown) => ({ name, summary, payload });

/** `{name: {$ref: '#/components/messages/<name>'}, …}`: a channel's messages, by component name. */
const messageRefs = (...names: string[]) =>
  Object.fromEntries(names.map((n) => [n, { $ref: `#/components/messages/${n}` }]));

/** A channel on one of the document's servers. */
const channel = (
  address: string,
  server: string,
  description: string,
  messages: Record<string, unknown>,
  parameters?: Record<string, unknown>,
) => ({
  address,
  servers: [{ $ref: `#/servers/${server}` }],
  ...(parameters ? { parameters } : {}),
  description,
  messages,
});

const ENVELOPES = [
  'RoundEnvelope',
  'LifecycleEnvelope',
  'RecoveredEnvelope',
  'HeartbeatEnvelope',
  'ErrorEnvelope',
  'UnsubscribedEnvelope',
];

/** The AsyncAPI 3.1 document (plain JSON). */
export function buildAsyncApi(): Record<string, unknown> {
  const avro = latestSchemas();
  const avroMessages = Object.fromEntries(
    avro.map((s) => [
      shortName(s.name),
      {
        name: shortName(s.name),
        title: `${shortName(s.name)} v${s.version}`,
        summary: `Avro record ${s.name}, Confluent wire format with schema id ${s.id} (schemas/${s.file}).`,
        contentType: 'application/octet-stream',
        payload: {
          schemaFormat: AVRO_FORMAT,
          schema: JSON.parse(readFileSync(join(APP_ROOT, 'schemas', s.file), 'utf8')),
        },
      },
    ]),
  );
  const byEvent = new Map(avro.map((s) => [shortName(s.name), shortName(s.name)]));
  const topicChannels = Object.fromEntries(
    Object.entries(TOPICS).map(([id, t]) => {
      const events = t.events.filter((e) => byEvent.has(e));
      return [
        `topic-${id}`,
        {
          address: t.base,
          title: t.base,
          description: `Kafka topic \`${t.base}\` (prefixed by TOPIC_NAMESPACE); record key: ${t.key}. Events: ${t.events.join(', ')}. Configuration: ${Object.entries(
            t.configEntries,
          )
            .map(([k, v]) => `${k}=${v}`)
            .join(', ')}.`,
          servers: [{ $ref: '#/servers/kafka' }],
          messages: messageRefs(...events),
        },
      ];
    }),
  );
  const WS_TEXT =
    'One text frame per round in the stream form; with envelope=1 every frame is an envelope and the client may send subscribe/unsubscribe commands. Query: since=<position>, latest=1, envelope=1, lifecycle=1. Credential: a token as the requested subprotocol.';
  const SSE_TEXT =
    'text/event-stream: `event: initial` first, `event: message` per round, `: heartbeat` every 15 s; every event carries its position as `id:`, so Last-Event-ID (or since=) resumes. Query: since, envelope=1 (adds `event: recovered`), lifecycle=1 (adds `round-opened`, `betting-closed`), api_key or token.';
  const wsMessages = messageRefs('StreamRound', ...ENVELOPES, 'Subscribe', 'Unsubscribe');
  const ws = (address: string, parameters: Record<string, unknown>) =>
    channel(address, 'edge-ws', WS_TEXT, wsMessages, parameters);
  const sseMessages = {
    initial: { $ref: '#/components/messages/SseInitial' },
    message: { $ref: '#/components/messages/SseMessage' },
    recovered: { $ref: '#/components/messages/SseRecovered' },
    lifecycle: { $ref: '#/components/messages/SseLifecycle' },
  };
  const sse = (address: string, parameters: Record<string, unknown>) =>
    channel(address, 'edge-http', SSE_TEXT, sseMessages, parameters);
  const params = { game: gameParam };
  const tparams = { type: typeParam };
  const channels: Record<string, unknown> = {
    'ws-game': ws('/ws/{game}', params),
    'ws-type': ws('/ws/type/{type}', tparams),
    'ws-envelopes': ws('/ws/', {}),
    'sse-game': sse('/sse/{game}', params),
    'sse-type': sse('/sse/type/{type}', tparams),
    'sse-all': sse('/sse/all', {}),
    webtransport: channel(
      '/wt',
      'edge-webtransport',
      'WebTransport session: ?game=<slug> or ?type=<type>, token=<credential>. One datagram per round (stream form JSON text, or an envelope with envelope=1); with since=, the catch-up on a reliable stream, then live datagrams.',
      messageRefs('StreamRound', ...ENVELOPES),
    ),
    'grpc-streams': channel(
      'datastream.DataStream',
      'edge-grpc',
      'gRPC service of proto/datastream.proto: StreamByGame, StreamByType, StreamAll (Round messages, the stream form as protobuf, with `position` on request) and StreamRoundEvents (the envelope fields as one message). Metadata x-api-key or authorization: Bearer.',
      messageRefs('StreamRound', 'RoundEnvelope'),
    ),
    ...topicChannels,
  };
  const send = (channel: string, summary: string, messages?: string[]) => ({
    action: 'send',
    channel: { $ref: `#/channels/${channel}` },
    summary,
    ...(messages ? { messages: messages.map((m) => ({ $ref: `#/channels/${channel}/messages/${m}` })) } : {}),
  });
  const operations: Record<string, unknown> = {
    sendRoundsWsGame: send('ws-game', 'Pushes every round of one game.', [
      'StreamRound',
      'RoundEnvelope',
      'LifecycleEnvelope',
      'RecoveredEnvelope',
      'HeartbeatEnvelope',
      'ErrorEnvelope',
      'UnsubscribedEnvelope',
    ]),
    receiveCommandsWsGame: {
      action: 'receive',
      channel: { $ref: '#/channels/ws-game' },
      summary: 'Takes subscribe and unsubscribe commands (envelope=1).',
      messages: [
        { $ref: '#/channels/ws-game/messages/Subscribe' },
        { $ref: '#/channels/ws-game/messages/Unsubscribe' },
      ],
    },
    sendRoundsWsType: send('ws-type', 'Pushes every round of the games of one type.', [
      'StreamRound',
      'RoundEnvelope',
    ]),
    sendRoundsWsEnvelopes: send(
      'ws-envelopes',
      'With envelope=1 and no path selection: the subscriptions its commands add.',
      ['RoundEnvelope'],
    ),
    sendRoundsSseGame: send('sse-game', 'Streams every round of one game as server-sent events.'),
    sendRoundsSseType: send('sse-type', 'Streams every round of the games of one type.'),
    sendRoundsSseAll: send('sse-all', 'Streams every round of every game.'),
    sendRoundsWebTransport: send('webtransport', 'Pushes rounds as datagrams.'),
    sendRoundsGrpc: send('grpc-streams', 'Streams rounds over gRPC.'),
  };
  for (const id of Object.keys(TOPICS)) {
    const t = TOPICS[id as keyof typeof TOPICS];
    if (t.events.some((e) => byEvent.has(e)))
      operations[`append-${id}`] = send(`topic-${id}`, `Appends to ${t.base}.`);
  }
  const data = (payload: unknown) => ({
    type: 'string',
    description: 'JSON text',
    contentMediaType: 'application/json',
    'x-parsed': payload,
  });
  return {
    asyncapi: '3.1.0',
    info: {
      title: 'Casino rounds platform: streams and topics',
      version: API_VERSION,
      description:
        'Every finished round is pushed to subscribers on four protocols from stateless edges, resumable from a position; rounds, bets, wallet outcomes, sessions and keys are Avro records on Kafka topics (Confluent wire format, schema ids fixed in schemas/registry.json). The REST contract is /openapi.json; operator callbacks are /openapi-webhooks.json.',
    },
    defaultContentType: 'application/json',
    servers: {
      'edge-ws': {
        host: '127.0.0.1:8080',
        protocol: 'ws',
        description: 'Through the gateway (the edge listens on 8087).',
      },
      'edge-http': {
        host: '127.0.0.1:8080',
        protocol: 'http',
        description: 'SSE through the gateway (the edge listens on 8086).',
      },
      'edge-webtransport': {
        host: '127.0.0.1:4433',
        protocol: 'https',
        description: 'WebTransport over HTTP/3 (UDP).',
      },
      'edge-grpc': {
        host: '127.0.0.1:50051',
        protocol: 'grpc',
        description: 'gRPC with reflection and grpc.health.v1.',
      },
      kafka: { host: '127.0.0.1:19092', protocol: 'kafka', description: 'The log (KAFKA_BROKERS).' },
    },
    channels,
    operations,
    components: {
      messages: {
        StreamRound: msg('StreamRound', 'One finished round in the stream form.', streamRound),
        RoundEnvelope: msg(
          'RoundEnvelope',
          'A round with its subscription and position; initial marks the latest round on subscribe, replay a catch-up, prev the previous round id of its game.',
          envelope('round', streamRound, {
            initial: { type: 'boolean' },
            replay: { type: 'boolean' },
            prev: { type: ['integer', 'null'] },
          }),
        ),
        LifecycleEnvelope: msg(
          'LifecycleEnvelope',
          'A betting window opened or closed (lifecycle=1).',
          envelope('lifecycle', lifecycle),
        ),
        RecoveredEnvelope: msg(
          'RecoveredEnvelope',
          'Once per subscription, after its catch-up.',
          envelope('recovered', recovered),
        ),
        HeartbeatEnvelope: msg(
          'HeartbeatEnvelope',
          "The subscription's current position, every heartbeat.",
          envelope('heartbeat', { type: 'object', maxProperties: 0 }),
        ),
        ErrorEnvelope: msg(
          'ErrorEnvelope',
          'A refused command or a subscription ended by the server.',
          envelope('error', {
            type: 'object',
            required: ['status', 'error'],
            properties: { status: { type: 'integer' }, error: { type: 'string' }, op: { type: 'string' } },
          }),
        ),
        UnsubscribedEnvelope: msg(
          'UnsubscribedEnvelope',
          'An unsubscribe acknowledged.',
          envelope('unsubscribed', { type: 'object', maxProperties: 0 }),
        ),
        Subscribe: msg('Subscribe', 'Adds a subscription on this connection.', {
          type: 'object',
          required: ['op', 'sub'],
          properties: {
            op: { const: 'subscribe' },
            sub: { type: 'string' },
            since: position,
            latest: { type: 'boolean' },
            lifecycle: { type: 'boolean' },
          },
        }),
        Unsubscribe: msg('Unsubscribe', 'Ends a subscription on this connection.', {
          type: 'object',
          required: ['op', 'sub'],
          properties: { op: { const: 'unsubscribe' }, sub: { type: 'string' } },
        }),
        SseInitial: {
          name: 'initial',
          summary: 'event: initial, the latest round of the subscription; id: its position.',
          contentType: 'text/event-stream',
          payload: data(streamRound),
        },
        SseMessage: {
          name: 'message',
          summary: 'event: message, one round; id: the position after it.',
          contentType: 'text/event-stream',
          payload: data(streamRound),
        },
        SseRecovered: {
          name: 'recovered',
          summary: 'event: recovered (envelope=1), after the catch-up; id: the position.',
          contentType: 'text/event-stream',
          payload: data(recovered),
        },
        SseLifecycle: {
          name: 'lifecycle',
          summary:
            'event: round-opened or betting-closed (lifecycle=1); id: the position of the last round delivered before it.',
          contentType: 'text/event-stream',
          payload: data(lifecycle),
        },
        ...avroMessages,
      },
    },
  };
}
