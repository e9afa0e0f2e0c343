/**
 * The rounds window against a real Postgres, written by the projector's own
 * statement (lib/projections/rounds/store.ts): given these committed rows, the API with the
 * window answers latest and history exactly as the API reading Postgres does, follows each commit
 * through the projector's notification (the poll is set far out of the test's reach), keeps a
 * round shown by latest in history in the same state, and answers without a database query.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSql, type Sql } from '../../lib/db/pool.ts';
import { createLogger } from '../../lib/logger.ts';
import { type OffsetEvent, writeChunk } from '../../lib/projections/rounds/store.ts';
import { RoundsWindow, WINDOW_CAPACITY } from '../../services/api/rounds/window.ts';
import { startWindowFeed, type WindowFeed } from '../../services/api/rounds/window-feed.ts';
import { startTestApi, type TestApi } from '../support/api.ts';
import { waitFor } from '../support/poll.ts';
import { syntheticRound } from '../support/rounds-fixture.ts';

const T0 = Date.UTC(2026, 0, 1);
const key = { projection: 'rounds', topic: 'rounds', partition: 0 };
let offset = 0n;
let seq = 0;

/** `n` rounds of each game after the previous ones, committed by the projector's statement. */
async function commit(sql: Sql, n: number): Promise<void> {
  const events: OffsetEvent[] = [];
  for (let i = 0; i < n * 4; i++) {
    const s = Math.floor(seq / 4) + 1;
    events.push({
      offset: offset++,
      event: { round: syntheticRound(seq, s, T0 + s * 1000), appendedAt: T0 + s * 1000 + 3 },
    });
    seq++;
  }
  await writeChunk(sql, key, events, offset);
}

let db: TestApi; // reads Postgres on every request
let mem: TestApi; // the window
let window: RoundsWindow;
let feed: WindowFeed;
let listenSql: Sql;
let queries = 0;

const URLS = [
  ...['crash', 'double', 'slot', 'wall-street'].map((g) => `/api/latest/${g}`),
  ...[1, 7, 500, 1000].map((l) => `/api/history/crash?limit=${l}`),
  '/api/history/slot?limit=1000',
  ...['multiplier', 'color', 'slots', 'trending'].map((t) => `/api/history/type/${t}?limit=1000`),
  '/api/history/type/multiplier',
];

async function same(): Promise<void> {
  for (const url of URLS) {
    const [a, b] = await Promise.all([db.app.inject(url), mem.app.inject(url)]);
    expect(b.statusCode, url).toBe(a.statusCode);
    expect(b.headers['content-type'], url).toBe(a.headers['content-type']);
    expect(b.json(), url).toEqual(a.json());
  }
}

beforeAll(async () => {
  db = await startTestApi({ RATE_LIMIT_MAX: 100_000 });
  await commit(db.sql, 3);
  window = new RoundsWindow();
  const counted = createSql(db.config, { max: 2 });
  // The pool the window's API answers requests with: every query through it is counted.
  const countingSql = new Proxy(counted, {
    apply: (target, self, args) => {
      queries++;
      return Reflect.apply(target, self, args);
    },
  });
  mem = await startTestApi(
    { RATE_LIMIT_MAX: 100_000, DATABASE_SCHEMA: db.config.db.schema },
    { migrated: false, roundsWindow: window },
  );
  listenSql = createSql(db.config, { max: 1 });
  feed = startWindowFeed({
    window,
    sql: countingSql,
    listenSql,
    schema: db.config.db.schema,
    logger: createLogger('window-test', 'silent'),
    pollMs: 600_000,
  });
  await feed.started;
});

afterAll(async () => {
  await feed?.stop();
  await listenSql?.end({ timeout: 5 });
  await mem?.close();
  await db?.close();
});

describe('the rounds window', () => {
  it('answers latest and history as Postgres does, once loaded', async () => {
    expect(window.warm).toBe(true);
    await same();
  });

  it("follows the projector's commits through its notification, latest always within history", async () => {
    for (let i = 0; i < 3; i++) {
      const before = queries;
      await commit(db.sql, 2);
      await waitFor('the window to show the commit', async () => {
        const latest = (await mem.app.inject('/api/latest/crash')).json() as { round_id: number };
        return latest.round_id === 1e12 + seq / 4 ? true : undefined;
      });
      expect(queries - before, 'one fetch per notification').toBeLessThanOrEqual(2);
      await same();
    }
    const [latest, history] = await Promise.all([
      mem.app.inject('/api/latest/double'),
      mem.app.inject('/api/history/double?limit=1'),
    ]);
    expect(history.json()[0].round_id).toBe(latest.json().round_id);
  });

  it('keeps the newest 1,000 per game and per type when more are committed at once', async () => {
    await commit(db.sql, WINDOW_CAPACITY + 200);
    await waitFor('the window to take the burst', async () =>
      window.head(1)?.round_id === 1e12 + seq / 4 ? true : undefined,
    );
    await same();
    expect((await mem.app.inject('/api/history/crash?limit=1000')).json()).toHaveLength(1000);
  });

  it('answers from memory: no query while requests come in', async () => {
    const before = queries;
    for (let i = 0; i < 50; i++) {
      for (const url of URLS) expect((await mem.app.inject(url)).statusCode).toBe(200);
    }
    await sleep(50);
    expect(queries).toBe(before);
  });

  it('goes to Postgres while cold', async () => {
    window.warm = false;
    try {
      await same();
    } finally {
      window.warm = true;
    }
  });
});
