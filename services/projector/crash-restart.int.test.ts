/**
 * Crash safety of the projector process (`tsx services/projector/main.ts`): SIGKILL it twice in the
 * middle of a 60 000-record replay, start it again, and the read model ends with every round
 * exactly once and the checkpoints at the high-water marks. A fetch brings about 5,000 rounds of a
 * partition (1 MiB), and the projector writes a fetch in one go, so each partition holds several
 * fetches: a kill right after a run's first write leaves records to project.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { partitionOffsets } from '../../lib/log/kafka.ts';
import { waitFor } from '../../tests/support/poll.ts';
import type { Service } from '../../tests/support/processes.ts';
import {
  createTestEnv,
  produceAll,
  roundMessage,
  sampleRounds,
  startProjectorProcess,
  type TestEnv,
} from '../../tests/support/projector.ts';

const PER_GAME = 15_000;
const TOTAL = PER_GAME * 4;
let e: TestEnv;
let child: Service | undefined;

beforeAll(async () => {
  e = await createTestEnv('crash');
  await produceAll(e.producer, e.topic, sampleRounds(PER_GAME).map(roundMessage));
}, 120_000);

afterAll(async () => {
  await child?.stop('SIGKILL');
  await e?.close();
});

async function rowCount(): Promise<number> {
  const [r] = await e.sql<{ n: number }[]>`select count(*)::int as n from rounds`;
  return r?.n ?? 0;
}

const start = (): Service => startProjectorProcess(e);

describe('projector process killed with SIGKILL mid-replay', () => {
  it('loses nothing and doubles nothing over two kills and restarts', async () => {
    const seen: number[] = [];
    for (let kill = 0; kill < 2; kill++) {
      const before = seen.at(-1) ?? 0;
      const t = performance.now();
      child = start();
      seen.push(
        await waitFor(
          'rows committed by this run',
          async () => {
            const n = await rowCount();
            return n > before ? n : undefined;
          },
          60_000,
          10,
        ),
      );
      expect(await child.stop('SIGKILL')).toBe('SIGKILL');
      const atKill = await rowCount();
      console.info(
        `crash-restart: run ${kill + 1} killed after ${Math.round(performance.now() - t)} ms at ${atKill} rows`,
      );
      expect(atKill).toBeLessThan(TOTAL); // killed mid-replay, not after it
      seen.push(atKill);
    }

    const high = await partitionOffsets(e.kafka, e.topic);
    const restartedAt = performance.now();
    const resumedFrom = await rowCount();
    child = start();
    await waitFor(
      'checkpoints at the high-water marks',
      async () => {
        const rows = await e.sql<{ partition: number; offset: string }[]>`
        select "partition", "offset"::text as "offset" from projection_checkpoints`;
        const cps = new Map(rows.map((r) => [r.partition, BigInt(r.offset)]));
        return [...high].every(([p, o]) => o.high === 0n || cps.get(p) === o.high) ? true : undefined;
      },
      120_000,
      50,
    );
    const seconds = (performance.now() - restartedAt) / 1000;
    console.info(
      `crash-restart: row counts at kills ${seen.join(' → ')}; last run projected ${TOTAL - resumedFrom} records in ${seconds.toFixed(2)} s including process start (${Math.round((TOTAL - resumedFrom) / seconds)} records/s)`,
    );

    const [all] = await e.sql<{ n: number; d: number }[]>`
      select count(*)::int as n, count(distinct (game_id, round_id))::int as d from rounds`;
    expect(all).toEqual({ n: TOTAL, d: TOTAL });
    const perGame = await e.sql<{ slug: string; n: number; lo: string; hi: string; last: string }[]>`
      select r.game_slug as slug, count(*)::int as n, min(r.round_id)::text as lo, max(r.round_id)::text as hi,
             g.last_round::text as last
      from rounds r join games g on g.id = r.game_id group by r.game_slug, g.last_round order by slug`;
    expect(perGame).toHaveLength(4);
    for (const g of perGame) {
      expect(g.n).toBe(PER_GAME);
      expect(BigInt(g.hi) - BigInt(g.lo) + 1n).toBe(BigInt(PER_GAME)); // consecutive: no gap
      expect(g.last).toBe(g.hi);
    }
    expect(await child.stop('SIGTERM')).toBe(0);
  }, 240_000);
});
