/**
 * Avro values in Confluent wire format: magic byte 0, 4-byte big-endian schema id, Avro binary
 * body (Confluent "Wire format" documentation). Schema ids are fixed in schemas/registry.json so
 * Redpanda's schema registry can adopt them later without a change of format.
 *
 * A record is decoded with the schema its id names (the writer schema) and resolved to the
 * newest version of its subject (the reader schema), so old records stay readable after a
 * schema evolves.
 */
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import avro from 'avsc';
import { DecodeError, EncodeError } from '../errors.ts';

/** This file's directory. Deno, which also loads lib/ (services/edge-webtransport), types it `string | undefined`. */
const HERE = import.meta.dirname as string;
const SCHEMA_DIR = resolve(HERE, '..', '..', 'schemas');
const MAGIC = 0;
const HEADER_BYTES = 5;

interface RegistryEntry {
  id: number;
  subject: string;
  name: string;
  version: number;
  file: string;
}

interface LoadedSchema extends RegistryEntry {
  type: avro.Type;
}

/** Loads and parses every schema listed in schemas/registry.json. */
export function loadRegistry(dir: string = SCHEMA_DIR): Map<number, LoadedSchema> {
  const registry = JSON.parse(readFileSync(join(dir, 'registry.json'), 'utf8')) as {
    schemas: RegistryEntry[];
  };
  const out = new Map<number, LoadedSchema>();
  for (const e of registry.schemas) {
    if (out.has(e.id)) throw new Error(`schemas/registry.json: schema id ${e.id} used twice`);
    const type = avro.Type.forSchema(JSON.parse(readFileSync(join(dir, e.file), 'utf8')));
    out.set(e.id, { ...e, type });
  }
  return out;
}

const registry = loadRegistry();
const latestBySubject = new Map<string, LoadedSchema>();
for (const s of registry.values()) {
  const cur = latestBySubject.get(s.subject);
  if (!cur || s.version > cur.version) latestBySubject.set(s.subject, s);
}
/** Resolvers from each writer id to the latest reader of its subject, built once. */
const resolvers = new Map<number, avro.Resolver | null>();
for (const s of registry.values()) {
  const latest = latestBySubject.get(s.subject) as LoadedSchema;
  resolvers.set(s.id, latest.id === s.id ? null : latest.type.createResolver(s.type));
}

/** The newest schema of `subject`. @throws Error when the subject is unknown. */
export function latestSchema(subject: string): { id: number; type: avro.Type } {
  const s = latestBySubject.get(subject);
  if (!s) throw new Error(`no schema for subject ${subject}`);
  return { id: s.id, type: s.type };
}

/**
 * Encodes `value` with the newest schema of `subject`, framed in the Confluent wire format.
 * @throws EncodeError when the value does not match the schema (the message names the paths).
 */
export function encode(subject: string, value: unknown): Buffer {
  const { id, type } = latestSchema(subject);
  const paths: string[] = [];
  if (!type.isValid(value, { errorHook: (p) => paths.push(p.join('.') || '(root)') })) {
    throw new EncodeError(`value does not match ${subject} (schema id ${id}) at ${paths.join(', ')}`);
  }
  const body = type.toBuffer(value);
  const out = Buffer.allocUnsafe(HEADER_BYTES + body.length);
  out.writeUInt8(MAGIC, 0);
  out.writeUInt32BE(id, 1);
  body.copy(out, HEADER_BYTES);
  return out;
}

/**
 * Decodes a framed record, resolving it to the newest schema of its subject.
 * `expectedSubject`, when given, is checked from the header before the body is read, so a record of
 * another event type is refused by name rather than by a confusing Avro body error.
 * @returns the schema id found in the header, its subject and the decoded value.
 * @throws DecodeError for a missing value, a wrong magic byte, an unknown schema id, a schema of
 *   another subject than `expectedSubject`, or a bad body.
 */
export function decode(
  buf: Buffer | null | undefined,
  expectedSubject?: string,
): {
  schemaId: number;
  subject: string;
  value: unknown;
} {
  if (!buf || buf.length < HEADER_BYTES)
    throw new DecodeError(`record too short (${buf?.length ?? 0} bytes)`);
  if (buf.readUInt8(0) !== MAGIC) throw new DecodeError(`bad magic byte ${buf.readUInt8(0)}`);
  const id = buf.readUInt32BE(1);
  const writer = registry.get(id);
  if (!writer) throw new DecodeError(`unknown schema id ${id}`);
  if (expectedSubject !== undefined && writer.subject !== expectedSubject)
    throw new DecodeError(`schema id ${id} is ${writer.subject}, expected ${expectedSubject}`);
  const resolver = resolvers.get(id) ?? undefined;
  const reader = (latestBySubject.get(writer.subject) as LoadedSchema).type;
  try {
    const value = reader.fromBuffer(buf.subarray(HEADER_BYTES), resolver);
    return { schemaId: id, subject: writer.subject, value };
  } catch (err) {
    throw new DecodeError(`Avro body does not decode with schema id ${id}: ${(err as Error).message}`, err);
  }
}
