/**
 * The API serves its three contract documents, and the REST one, /openapi.json (generated from the
 * route schemas of the whole API: auth, publisher and session routes included), validates with
 * @readme/openapi-parser as the companion documents do (documents.unit.test.ts).
 */
import { compileErrors, validate } from '@readme/openapi-parser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AuthTestApi, startAuthTestApi } from '../../../tests/support/auth.ts';
import { buildAsyncApi } from './asyncapi.ts';
import { buildWebhooksDocument } from './webhooks.ts';

let t: AuthTestApi;
beforeAll(async () => {
  t = await startAuthTestApi();
});
afterAll(async () => {
  await t?.close();
});

describe('contract documents', () => {
  it('serves /asyncapi.json and /openapi-webhooks.json as built from the code', async () => {
    const a = await t.app.inject({ url: '/asyncapi.json' });
    expect(a.statusCode).toBe(200);
    expect(a.headers['content-type']).toMatch(/^application\/json/);
    expect(a.json()).toEqual(buildAsyncApi());
    const w = await t.app.inject({ url: '/openapi-webhooks.json' });
    expect(w.statusCode).toBe(200);
    expect(w.json()).toEqual(buildWebhooksDocument());
  });

  it('serves an /openapi.json that validates (OpenAPI 3.0.0) and leaves the documents themselves out', async () => {
    const doc = (await t.app.inject({ url: '/openapi.json' })).json();
    expect(doc.openapi).toBe('3.0.0');
    const result = await validate(doc);
    expect(result.valid, result.valid ? '' : compileErrors(result)).toBe(true);
    expect(Object.keys(doc.paths)).toEqual(
      expect.arrayContaining(['/api/rounds', '/api/rounds/open', '/games/request-access']),
    );
    expect(Object.keys(doc.paths)).not.toContain('/asyncapi.json');
  });
});
