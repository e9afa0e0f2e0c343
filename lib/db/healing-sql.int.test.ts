/**
 * The API's self-healing pool (lib/db/healing-sql.ts) against the real Postgres: a pool whose server
 * never answers is replaced after `stallMs` and its query fails with a connection error instead of
 * hanging; a pool that cannot connect is replaced after the error; the next query is answered by
 * the fresh pool. (The whole story, with a real Postgres restart: tests/drills/postgres.e2e.test.ts.)
 */
import { createServer, type Server, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../tests/support/config.ts';
import { createLogger } from '../logger.ts';
import { createHealingSql } from './healing-sql.ts';
import { createSql, isConnectionError } from './pool.ts';

const config = loadConfig();
const logger = createLogger('healing-sql-test', 'silent');
let blackhole: Server;
const sockets = new Set<Socket>();
let silentUrl: string;

beforeAll(async () => {
  // Accepts connections and never says a word: a database that stopped answering.
  blackhole = createServer((s) => {
    sockets.add(s);
    s.on('error', () => {});
  });
  await new Promise<void>((r) => blackhole.listen(0, '127.0.0.1', r));
  const url = new URL(config.db.url);
  url.host = `127.0.0.1:${(blackhole.address() as { port: number }).port}`;
  silentUrl = url.toString();
});

afterAll(async () => {
  for (const s of sockets) s.destroy();
  await new Promise((r) => blackhole.close(r));
});

describe('healing pool', () => {
  it('replaces a pool whose query has no answer, and fails that query instead of hanging', async () => {
    const first = createSql({ db: { ...config.db, url: silentUrl } }, { max: 1 });
    const healing = createHealingSql({
      first,
      make: () => createSql(config, { max: 1 }),
      stallMs: 300,
      logger,
    });
    const t = performance.now();
    const err = await healing.sql`select 1 as one`.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(isConnectionError(err)).toBe(true);
    expect(performance.now() - t).toBeLessThan(4000); // the stall bound plus the old pool's 1 s end
    expect(healing.replacements()).toBe(1);
    expect(await healing.sql`select 1 as one`).toEqual([{ one: 1 }]);
    await healing.sql.end({ timeout: 1 });
  });

  it('replaces a pool that cannot connect after the error', async () => {
    const url = new URL(config.db.url);
    url.host = '127.0.0.1:1';
    const first = createSql({ db: { ...config.db, url: url.toString() } }, { max: 1 });
    const healing = createHealingSql({
      first,
      make: () => createSql(config, { max: 1 }),
      stallMs: 5000,
      logger,
    });
    await expect(healing.sql`select 1`).rejects.toMatchObject({ code: 'ECONNREFUSED' });
    expect(healing.replacements()).toBe(1);
    expect(await healing.sql.unsafe('select 2 as two')).toEqual([{ two: 2 }]);
    // A fragment that is never awaited runs nothing and changes nothing.
    healing.sql`select pg_sleep(10)`;
    expect(healing.replacements()).toBe(1);
    await healing.sql.end({ timeout: 1 });
  });
});
