/**
 * SIGKILL of the projector process (`tsx services/projector/main.ts`) in the middle of a replay, repeated
 * until each of its three consumers — the rounds projector, the wallet projector and the auth-keys
 * projector — has been killed with records still to project right after one of
 * its writes; then a last run: every read model ends exactly as the log says, nothing lost and
 * nothing doubled, and every checkpoint at its topic's high-water mark. (Rounds alone, twice:
 * crash-restart.int.test.ts.)
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  appendLoad,
  behind,
  createLoadEnv,
  type Load,
  type LoadEnv,
  readModelProblems,
  rowCounts,
} from '../../tests/support/load.ts';
import { waitFor } from '../../tests/support/poll.ts';
import type { Service } from '../../tests/support/processes.ts';
import { startProjectorProcess } from '../../tests/support/projector.ts';

const LOAD: Load = { roundsPerGame: 4000, bets: 20_000, keys: 30_000 };
let e: LoadEnv;
let child: Service | undefined;

beforeAll(async () => {
  e = await createLoadEnv('kill');
  await appendLoad(e, LOAD);
}, 120_000);

afterAll(async () => {
  await child?.stop('SIGKILL');
  await e?.close();
});

const start = () => startProjectorProcess(e);

describe('projector process killed with SIGKILL while its three consumers replay', () => {
  it('ends with every read model exactly as the log says', async () => {
    const atKills: string[] = [];
    const full = {
      rounds: LOAD.roundsPerGame * 4,
      wallet: LOAD.bets + Math.ceil(LOAD.bets / 3),
      keys: LOAD.keys,
    };
    const models = ['rounds', 'wallet', 'keys'] as const;
    const killedMid = new Set<string>();
    // Each run is killed as soon as a consumer not yet caught this way, with records still to
    // project, commits a write, so the kill lands while it has more batches in flight; runs go on
    // until each of the three has been killed that way. (They start at different times: after a
    // SIGKILL the rounds and wallet groups wait up to their 10 s session timeout to rejoin.)
    for (let run = 0; run < 6 && killedMid.size < models.length; run++) {
      const before = await rowCounts(e);
      child = start();
      const targets = models.filter((m) => !killedMid.has(m) && before[m] < full[m]);
      await waitFor(
        `a write of ${targets.join(' or ')} in this run`,
        async () => {
          const now = await rowCounts(e);
          return targets.some((m) => now[m] > before[m]) ? true : undefined;
        },
        90_000,
        10,
      );
      expect(await child.stop('SIGKILL')).toBe('SIGKILL');
      const at = await rowCounts(e);
      for (const m of models) if (at[m] > before[m] && at[m] < full[m]) killedMid.add(m);
      atKills.push(JSON.stringify(at));
    }
    expect([...killedMid].sort(), atKills.join(' → ')).toEqual(['keys', 'rounds', 'wallet']);
    child = start();
    const t = performance.now();
    await waitFor(
      'every checkpoint at the high-water mark',
      async () => ((await behind(e)).length === 0 ? true : undefined),
      120_000,
      100,
    ).catch(async (err: Error) => {
      throw new Error(`${err.message}: ${(await behind(e)).join(', ')}\n${child?.output().slice(-6000)}`);
    });
    console.info(
      `projector kill: rows at the kills ${atKills.join(' → ')}; caught up ${Math.round(performance.now() - t)} ms after the last start`,
    );
    expect(await readModelProblems(e, LOAD)).toEqual([]);
    expect(await child.stop('SIGTERM')).toBe(0);
  }, 240_000);
});
