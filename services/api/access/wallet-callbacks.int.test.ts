/**
 * The admin API over the wallet saga's callbacks (services/api/access/wallet-callbacks.ts) on a real
 * API instance (broker, Postgres, admin key): list by each filter with ISO times, one callback in
 * full, 404 for an unknown one, re-drives (dry run, by filter, all) that never touch done, skipped or
 * in-flight callbacks, admin auth exactly as /admin/operators, every bad input a 400 problem naming
 * the field with nothing changed, and the three routes described in /openapi.json.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callbackJson } from '../../../lib/db/wallet-callbacks.ts';
import { type AccessTestApi, startAccessTestApi } from '../../../tests/support/access.ts';
import {
  type CallbackRow,
  callbackSet,
  insertCallbacks,
  storedCallback,
  viewOf,
} from '../../../tests/support/wallet-callbacks.ts';

const T0 = Date.UTC(2026, 0, 1, 12);
const iso = (minutes: number) => new Date(T0 + minutes * 60_000).toISOString();
const ALL = [101, 103, 105, 107, 109, 111, 113, 115];
let t: AccessTestApi;
let reader = '';
const adminH = () => ({ 'x-api-key': t.adminKey });

beforeAll(async () => {
  t = await startAccessTestApi();
  await insertCallbacks(t.sql, callbackSet(T0));
  const k = await t.app.inject({
    method: 'POST',
    url: '/api/auth/keys',
    headers: adminH(),
    payload: { name: 'reader', scopes: ['read:rounds'], kind: 'private' },
  });
  reader = (k.json() as { secret: string }).secret;
});
afterAll(async () => {
  await t?.close();
});

const stored = () => Promise.all(ALL.map((id) => storedCallback(t.sql, id)));
const get = (url: string, headers: Record<string, string> = adminH()) =>
  t.app.inject({ method: 'GET', url, headers });
const redrive = (payload: unknown, headers: Record<string, string> = adminH()) =>
  t.app.inject({
    method: 'POST',
    url: '/admin/wallet/callbacks/redrive',
    headers: { ...headers, 'content-type': 'application/json' },
    payload: JSON.stringify(payload),
  });
const ids = (body: { callbacks?: { tx_id: number }[]; redriven?: { tx_id: number }[] }) =>
  (body.callbacks ?? body.redriven ?? []).map((c) => c.tx_id);

describe('GET /admin/wallet/callbacks', () => {
  it.each([
    ['', [115, 105, 103, 101]],
    ['?status=parked', [115, 103, 101]],
    ['?status=retrying', [105]],
    ['?status=in_flight', [109]],
    ['?status=any&limit=3', [115, 113, 111]],
    ['?operator_id=op-1', [103, 101]],
    ['?user_id=u-1', [105, 101]],
    ['?operator_id=op-2&user_id=u-2', [115]],
    ['?tx_id=103', [103]],
    ['?status=any&tx_id=111', [111]],
    [`?from=${iso(3)}`, [115, 105]],
    [`?to=${encodeURIComponent('2026-01-01T13:03:00+01:00')}`, [103, 101]],
    [`?status=any&from=${iso(2)}&to=${iso(6)}`, [109, 107, 105, 103]],
    ['?operator_id=op-9', []],
  ])('%s', async (query, expected) => {
    const res = await get(`/admin/wallet/callbacks${query}`);
    expect(res.statusCode, res.body).toBe(200);
    expect(ids(res.json())).toEqual(expected);
  });

  it('shows each callback as the ops list does, times ISO 8601', async () => {
    const [c] = (await get('/admin/wallet/callbacks?tx_id=101')).json().callbacks;
    const row = callbackSet(T0).find((r) => r.txId === 101) as CallbackRow;
    expect(c).toEqual(callbackJson(viewOf(row)));
    expect(c).toMatchObject({ updated_at: iso(1), next_attempt_at: iso(1), last_code: '500' });
  });
});

describe('GET /admin/wallet/callbacks/:tx_id', () => {
  it('one callback of any status with its job and lease', async () => {
    const res = await get('/admin/wallet/callbacks/109');
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({
      tx_id: 109,
      status: 'in_flight',
      leased_by: 'saga-a',
      lease_until: iso(6),
      player_key: 'op-1:u-1',
      seq: 109,
      job: { kind: 'win', txId: 109, betTxId: 108, amountMinor: 2000, bet: { operator_id: 'op-1' } },
    });
  });

  it('404 problem JSON for an unknown one, 400 for a malformed one', async () => {
    const none = await get('/admin/wallet/callbacks/999999');
    expect(none.statusCode).toBe(404);
    expect(none.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(none.json()).toMatchObject({ status: 404, code: 'CALLBACK_NOT_FOUND' });
    const bad = await get('/admin/wallet/callbacks/12ab');
    expect(bad.statusCode).toBe(400);
    expect(bad.json().detail).toMatch(/^tx_id: must be a provider_tx_id/);
  });
});

describe('admin auth, as /admin/operators', () => {
  it.each([
    ['no key', {}, 401],
    ['a key without admin', 'reader', 403],
  ] as const)('%s', async (_n, who, status) => {
    const headers: Record<string, string> = who === 'reader' ? { 'x-api-key': reader } : {};
    const before = await stored();
    for (const res of [
      await get('/admin/wallet/callbacks', headers),
      await get('/admin/wallet/callbacks/101', headers),
      await redrive({ all: true }, headers),
    ]) {
      expect(res.statusCode).toBe(status);
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    }
    expect(await stored()).toEqual(before);
  });
});

describe('bad input: 400 naming the field, nothing changed', () => {
  it.each([
    ['?status=lost', 'status'],
    ['?tx_id=abc', 'tx_id'],
    ['?tx_id=0', 'tx_id'],
    ['?tx_id=99999999999999999', 'tx_id'],
    ['?from=yesterday', 'from'],
    ['?to=2026-01-01T12:00:00', 'to'],
    [`?from=${iso(5)}&to=${iso(1)}`, 'to'],
    ['?limit=0', 'limit'],
    ['?limit=1001', 'limit'],
    [`?operator_id=${'o'.repeat(129)}`, 'operator_id'],
    ['?user_id=', 'user_id'],
    ['?colour=red', 'colour'],
  ])('GET %s → %s', async (query, field) => {
    const res = await get(`/admin/wallet/callbacks${query}`);
    expect(res.statusCode, res.body).toBe(400);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(res.json().detail.startsWith(`${field}:`), res.json().detail).toBe(true);
  });

  it.each([
    [{}, 'body'],
    [{ status: 'parked' }, 'body'],
    [{ dry_run: true }, 'body'],
    [{ all: false }, 'body'],
    [{ all: true, operator_id: 'op-1' }, 'all'],
    [{ status: 'done', tx_ids: [111] }, 'status'],
    [{ tx_ids: ['101'] }, 'tx_ids.0'],
    [{ tx_ids: [] }, 'tx_ids'],
    [{ tx_ids: 101 }, 'tx_ids'],
    [{ operator_id: 7 }, 'operator_id'],
    [{ user_id: '' }, 'user_id'],
    [{ from: 'yesterday' }, 'from'],
    [{ from: iso(5), to: iso(1) }, 'to'],
    [{ all: 'yes' }, 'all'],
    [{ all: true, dry_run: 'true' }, 'dry_run'],
    [{ all: true, limit: 0 }, 'limit'],
    [{ all: true, colour: 'red' }, 'colour'],
  ])('POST %j → %s', async (payload, field) => {
    const before = await stored();
    const res = await redrive(payload);
    expect(res.statusCode, res.body).toBe(400);
    expect(res.json().detail.startsWith(`${field}:`), res.json().detail).toBe(true);
    expect(await stored()).toEqual(before);
  });
});

describe('ranges and methods', () => {
  it('from equal to to is an empty range: 200 with no callbacks', async () => {
    const res = await get(`/admin/wallet/callbacks?status=any&from=${iso(3)}&to=${iso(3)}`);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({ callbacks: [] });
  });

  it('GET of the re-drive path is 405 with Allow, not a tx_id', async () => {
    const res = await get('/admin/wallet/callbacks/redrive');
    expect(res.statusCode, res.body).toBe(405);
    expect(res.headers.allow).toBe('OPTIONS, POST');
    expect(res.json().status).toBe(405);
  });
});

describe('POST /admin/wallet/callbacks/redrive', () => {
  it('a dry run lists what would be re-driven and changes nothing', async () => {
    const before = await stored();
    const res = await redrive({ operator_id: 'op-1', dry_run: true });
    expect(res.statusCode).toBe(200);
    expect(res.json().dry_run).toBe(true);
    expect(ids(res.json())).toEqual([103, 101]);
    expect(await stored()).toEqual(before);
  });

  it('nothing matching: 200 with an empty list; done, skipped and in flight are never re-driven', async () => {
    const before = await stored();
    const res = await redrive({ tx_ids: [107, 109, 111, 113, 999] });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ dry_run: false, redriven: [] });
    expect(await stored()).toEqual(before);
  });

  it('re-drives by tx ids: due now, attempts from 0; answers them as they stood', async () => {
    const t1 = Date.now();
    const res = await redrive({ tx_ids: [101, 111] });
    expect(res.statusCode).toBe(200);
    expect(res.json().redriven).toEqual([
      expect.objectContaining({ tx_id: 101, status: 'parked', attempts: 17 }),
    ]);
    const s = await storedCallback(t.sql, 101);
    expect(s).toMatchObject({ status: 'due', attempts: 0 });
    expect(s?.next_attempt_at).toBeGreaterThanOrEqual(t1);
    expect(await storedCallback(t.sql, 111)).toMatchObject({ status: 'done', attempts: 1 });
  });

  it('re-drives by time range and status, then all: true the rest', async () => {
    const range = await redrive({ status: 'retrying', from: iso(0), to: iso(10) });
    expect(ids(range.json())).toEqual([105]);
    const all = await redrive({ all: true });
    expect(ids(all.json())).toEqual([115, 103]);
    expect(ids((await redrive({ all: true })).json())).toEqual([]);
    expect(ids((await get('/admin/wallet/callbacks')).json())).toEqual([]);
    expect(await storedCallback(t.sql, 109)).toMatchObject({ status: 'in_flight', attempts: 2 });
    expect(await storedCallback(t.sql, 113)).toMatchObject({ status: 'skipped' });
  });
});

describe('/openapi.json', () => {
  it('describes the three routes with their parameters, body and responses', async () => {
    const doc = (await t.app.inject({ url: '/openapi.json' })).json();
    const list = doc.paths['/admin/wallet/callbacks'].get;
    expect(list.tags).toEqual(['callbacks']);
    expect(list.security).toEqual([{ apiKey: [] }]);
    expect(list.parameters.map((p: { name: string }) => p.name).sort()).toEqual(
      ['from', 'limit', 'operator_id', 'status', 'to', 'tx_id', 'user_id'].sort(),
    );
    expect(Object.keys(list.responses)).toEqual(expect.arrayContaining(['200', '400', '401', '403']));
    const one = doc.paths['/admin/wallet/callbacks/{tx_id}'].get;
    expect(Object.keys(one.responses)).toEqual(expect.arrayContaining(['200', '404']));
    const post = doc.paths['/admin/wallet/callbacks/redrive'].post;
    const body = post.requestBody.content['application/json'].schema;
    expect(body.additionalProperties).toBe(false);
    expect(Object.keys(body.properties).sort()).toEqual(
      ['all', 'dry_run', 'from', 'limit', 'operator_id', 'status', 'to', 'tx_ids', 'user_id'].sort(),
    );
    expect(body.properties.status.enum).toEqual(['waiting', 'parked', 'retrying']);
    expect(
      post.responses['200'].content['application/json'].schema.properties.redriven.items.properties,
    ).toHaveProperty('last_answer');
  });
});
