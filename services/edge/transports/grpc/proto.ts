/**
 * The gRPC contract of the edge, loaded at run time from `proto/datastream.proto` (the source of
 * truth, docs/conventions.md §4; no generated code), and the TypeScript shapes of its messages as
 * @grpc/proto-loader presents them with {@link LOADER_OPTIONS}: field names as in the .proto,
 * int64 as JS numbers (every id and Unix-ms time fits in 2^53), absent optional fields absent.
 */
import { resolve } from 'node:path';
import {
  type CallOptions,
  type Client,
  type ClientReadableStream,
  type ClientUnaryCall,
  credentials,
  type Metadata,
  makeClientConstructor,
  type ServiceDefinition,
  type ServiceError,
} from '@grpc/grpc-js';
import { loadSync, type Options, type PackageDefinition } from '@grpc/proto-loader';
import type { StreamRound } from '../../../../rules/rounds/round.ts';

export const PROTO_PATH = resolve(import.meta.dirname, '..', '..', '..', '..', 'proto', 'datastream.proto');

/** Fully qualified service name (reflection, health). */
export const SERVICE_NAME = 'datastream.DataStream';

/** Shared by the server, the proxy's client and the tests, so both ends agree on shapes. */
export const LOADER_OPTIONS: Options = {
  keepCase: true,
  longs: Number,
  enums: String,
  defaults: false,
  oneofs: false,
  arrays: true,
};

/** `Game` of the game list; `last_round` and `last_update` are absent before the first round. */
export interface GameMsg {
  id: number;
  slug: string;
  name: string;
  type: string;
  last_round?: number;
  /** ISO 8601. */
  last_update?: string;
}

/** `Round`: the seed's stream form, field for field (plus `position` on streams that ask for it). */
export type RoundMsg = StreamRound & { position?: string };

/** `Filter`; every field optional (proto3 `optional` / repeated). */
export interface FilterMsg {
  min_point?: number;
  max_point?: number;
  colors?: string[];
  trends?: string[];
}

export interface GetLatestRequest {
  game_slug?: string;
}
export interface GetHistoryRequest {
  game_slug?: string;
  game_type?: string;
  limit?: number;
}
/** Resume and opt-ins of the Stream* requests. */
export interface StreamOptionsMsg {
  since?: string;
  latest?: boolean;
  positions?: boolean;
}
export interface StreamByGameRequest extends StreamOptionsMsg {
  game_slug?: string;
  filter?: FilterMsg | null;
}
export interface StreamByTypeRequest extends StreamOptionsMsg {
  game_type?: string;
  filter?: FilterMsg | null;
}
export interface StreamAllRequest extends StreamOptionsMsg {
  filter?: FilterMsg | null;
}
export interface StreamRoundEventsRequest {
  game_slug?: string;
  game_type?: string;
  all?: boolean;
  since?: string;
  latest?: boolean;
  lifecycle?: boolean;
  filter?: FilterMsg | null;
}
export interface RecoveredMsg {
  recovered: boolean;
  since: string;
  replayed: number;
  reason: string;
}
export interface LifecycleMsg {
  event: string;
  game_slug: string;
  game_id: number;
  round_id: number;
  betting_opens_at?: string;
  betting_closes_at?: string;
  commitment?: string;
  chain_epoch?: number;
  chain_index?: number;
  speed?: number;
  at?: string;
  timestamp: number;
}
/** `RoundEvent`: one envelope; `round`, `recovered` or `lifecycle` by `type`. */
export interface RoundEventMsg {
  type: 'round' | 'recovered' | 'lifecycle' | 'heartbeat';
  position: string;
  round?: RoundMsg;
  recovered?: RecoveredMsg;
  lifecycle?: LifecycleMsg;
  initial?: boolean;
  replay?: boolean;
  prev?: number;
}

type Unary<Req, Res> = (
  req: Req,
  metadata: Metadata,
  options: CallOptions,
  callback: (err: ServiceError | null, res?: Res) => void,
) => ClientUnaryCall;
type ServerStream<Req> = (
  req: Req,
  metadata?: Metadata,
  options?: CallOptions,
) => ClientReadableStream<RoundMsg>;

/** A typed DataStream client (grpc-js builds the methods at run time from the definition). */
export interface DataStreamClient extends Client {
  ListGames: Unary<Record<string, never>, { games: GameMsg[] }>;
  GetLatest: Unary<GetLatestRequest, RoundMsg>;
  GetHistory: Unary<GetHistoryRequest, { rounds: RoundMsg[] }>;
  StreamByGame: ServerStream<StreamByGameRequest>;
  StreamByType: ServerStream<StreamByTypeRequest>;
  StreamAll: ServerStream<StreamAllRequest>;
  StreamRoundEvents: (
    req: StreamRoundEventsRequest,
    metadata?: Metadata,
    options?: CallOptions,
  ) => ClientReadableStream<RoundEventMsg>;
}

let cached: PackageDefinition | undefined;

/** The parsed package (loaded once per process). @throws Error when the .proto is missing or invalid. */
export function loadDataStream(): PackageDefinition {
  cached ??= loadSync(PROTO_PATH, LOADER_OPTIONS);
  return cached;
}

/**
 * The DataStream service definition for `Server.addService`, with one change: the response
 * serializer of the streaming methods passes a `Buffer` through untouched. Streams write each
 * round's protobuf bytes encoded once per wire form ("serialised once per wire form,
 * not once per subscriber"), not the message object that grpc-js would encode per call.
 */
export function dataStreamService(): ServiceDefinition {
  const def = loadDataStream()[SERVICE_NAME] as ServiceDefinition;
  const out: Record<string, ServiceDefinition[string]> = {};
  for (const [name, m] of Object.entries(def)) {
    const serialize = m.responseSerialize;
    out[name] = m.responseStream
      ? { ...m, responseSerialize: (v: unknown) => (Buffer.isBuffer(v) ? v : serialize(v)) }
      : m;
  }
  return out as ServiceDefinition;
}

/** Protobuf bytes of a `Round` (without the 5-byte gRPC message prefix). */
export function encodeRoundMsg(round: RoundMsg): Buffer {
  const def = loadDataStream()[SERVICE_NAME] as ServiceDefinition;
  return (def.StreamAll as ServiceDefinition[string]).responseSerialize(round);
}

/** Protobuf bytes of a `RoundEvent`. */
export function encodeRoundEventMsg(event: RoundEventMsg): Buffer {
  const def = loadDataStream()[SERVICE_NAME] as ServiceDefinition;
  return (def.StreamRoundEvents as ServiceDefinition[string]).responseSerialize(event);
}

/** A DataStream client over an insecure channel to `address` (`host:port`); close it with `.close()`. */
export function createDataStreamClient(address: string): DataStreamClient {
  const def = loadDataStream()[SERVICE_NAME] as ServiceDefinition;
  const Ctor = makeClientConstructor(def, SERVICE_NAME);
  return new Ctor(address, credentials.createInsecure()) as unknown as DataStreamClient;
}
