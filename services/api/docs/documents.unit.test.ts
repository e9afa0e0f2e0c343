/**
 * The contract documents validate with their maintained parsers: the AsyncAPI 3.1 document with
 * @asyncapi/parser (and its Avro schema parser, so every topic's Avro schema is parsed too), the
 * OpenAPI 3.1 webhooks document with @readme/openapi-parser; and they list what the code has.
 */
import { AvroSchemaParser } from '@asyncapi/avro-schema-parser';
import { Parser } from '@asyncapi/parser';
import { compileErrors, validate } from '@readme/openapi-parser';
import { describe, expect, it } from 'vitest';
import { TOPICS } from '../../../lib/log/topics.ts';
import { buildAsyncApi } from './asyncapi.ts';
import { buildWebhooksDocument } from './webhooks.ts';

describe('the AsyncAPI document', () => {
  it('validates with @asyncapi/parser, Avro payloads included, with no error or warning', async () => {
    const parser = new Parser({ schemaParsers: [AvroSchemaParser()] });
    const { document, diagnostics } = await parser.parse(JSON.stringify(buildAsyncApi()));
    const errors = diagnostics.filter((d) => d.severity <= 1); // errors and warnings
    expect(errors.map((d) => `${d.path.join('.')}: ${d.message}`)).toEqual([]);
    expect(document).toBeDefined();
    // Every Avro message parsed into a schema (the Avro parser ran).
    const avro = document
      ?.components()
      .messages()
      .all()
      .filter((m) => m.payload()?.schemaFormat().includes('avro'));
    expect(avro?.length).toBeGreaterThanOrEqual(15);
  });

  it('has a channel for every topic of the registry and every stream address', () => {
    const doc = buildAsyncApi() as { channels: Record<string, { address: string }> };
    const addresses = Object.values(doc.channels).map((c) => c.address);
    for (const t of Object.values(TOPICS)) expect(addresses).toContain(t.base);
    for (const a of ['/ws/{game}', '/ws/type/{type}', '/sse/{game}', '/sse/type/{type}', '/sse/all', '/wt'])
      expect(addresses).toContain(a);
  });
});

describe('the OpenAPI webhooks document', () => {
  it('validates with @readme/openapi-parser', async () => {
    const result = await validate(structuredClone(buildWebhooksDocument()) as never);
    expect(result.valid, result.valid ? '' : compileErrors(result)).toBe(true);
  });

  it('carries every callback schema of schemas/callbacks/, with no reference outside the document', () => {
    const doc = buildWebhooksDocument() as {
      webhooks: Record<string, unknown>;
      components: { schemas: Record<string, unknown> };
    };
    expect(Object.keys(doc.webhooks).sort()).toEqual(
      ['balance', 'bet', 'rewardsB', 'rollbackA', 'rollbackB', 'roundEndA', 'roundEndB', 'win'].sort(),
    );
    const refs = JSON.stringify(doc).match(/"\$ref":"[^"]*"/g) ?? [];
    for (const r of refs) expect(r).toMatch(/"\$ref":"#\/components\/schemas\//);
  });
});
