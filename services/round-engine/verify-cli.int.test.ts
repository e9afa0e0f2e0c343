/**
 * The verify CLI's log lookup against the real broker: rounds decided by the engine's pure core
 * are appended to a topic of their own, then verified by round id (in-process and as the real
 * `tsx verify-cli.ts` process), including a forged record and a round that is not there.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKafka } from '../../lib/log/kafka.ts';
import { encodeRound, encodeRoundEvent } from '../../lib/log/rounds-codec.ts';
import { ensureTopics, topicName } from '../../lib/log/topics.ts';
import { createLogger } from '../../lib/logger.ts';
import { buildChain } from '../../rules/fairness/chain.ts';
import { GAME_SLUGS } from '../../rules/games/catalog.ts';
import {
  type ChainSource,
  decide,
  evolve,
  initialState,
  nextRound,
  ROUND_ID_BASE,
} from '../../rules/rounds/decider.ts';
import { closeBetting, openRound } from '../../rules/rounds/lifecycle.ts';
import { sealRound } from '../../rules/rounds/publishing.ts';
import type { RoundFinished } from '../../rules/rounds/round.ts';
import { loadConfig } from '../../tests/support/config.ts';
import { RoundNotFoundError, RoundOpenError } from './errors.ts';
import { findRound } from './log-tail.ts';
import { runVerify } from './verify-cli.ts';

const run = promisify(execFile);
const ROOT = resolve(import.meta.dirname, '..', '..');
const ns = `t-${randomBytes(4).toString('hex')}-`;
const config = loadConfig(process.env, { TOPIC_NAMESPACE: ns });
const kafka = createKafka(config, 'verify-cli-int', createLogger('test', 'silent'));
const topic = topicName(config, 'rounds');
const seed = randomBytes(32);
const chains: ChainSource = (slug, epoch) => buildChain(seed, slug, epoch, 8);
const PER_GAME = 12;
const FORGED_ID = 2 * ROUND_ID_BASE + PER_GAME + 1; // double, after the genuine ones
const EXTERNAL_SEEDS = [randomBytes(32).toString('hex'), randomBytes(32).toString('hex')];

async function cli(...argv: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runVerify(argv, {
    out: (l) => out.push(l),
    err: (l) => err.push(l),
    kafka: () => ({ kafka, topic }),
  });
  return { code, out: out.join('\n'), err: err.join('\n') };
}

beforeAll(async () => {
  const admin = kafka.admin();
  await admin.connect();
  await ensureTopics(admin, config, ['rounds']);
  await admin.disconnect();
  const rounds: RoundFinished[] = [];
  for (const slug of GAME_SLUGS) {
    let state = initialState(slug);
    for (let i = 0; i < PER_GAME; i++) {
      const r = decide(state, chains, Date.now());
      rounds.push(r);
      state = evolve(state, r);
    }
    if (slug === 'wall-street') {
      // Two rounds of an external game server after the engine's: each commits to its own seed.
      for (const [i, hex] of EXTERNAL_SEEDS.entries()) {
        const { commitment, result } = sealRound('wall-street', hex);
        rounds.push({
          type: 'RoundFinished',
          round_id: 4 * ROUND_ID_BASE + PER_GAME + 1 + i,
          game_id: 4,
          game_slug: 'wall-street',
          game_type: 'trending',
          finished_at: Date.now(),
          result,
          proof: { hash: hex, chain_epoch: 0, chain_index: 1, commitment },
        });
      }
    }
    if (slug === 'double') {
      // A record claiming the genuine next hash but a different result (white pays 14x).
      const genuine = decide(state, chains, Date.now());
      const forged = genuine.result.game === 'double' && genuine.result.number === 0 ? 1 : 0;
      rounds.push({
        ...genuine,
        result: { game: 'double', color: forged === 0 ? 'white' : 'red', number: forged },
      });
    }
  }
  const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
  await producer.connect();
  await producer.send({
    topic,
    acks: -1,
    messages: rounds.map((r) => ({ key: r.game_slug, value: encodeRound(r) })),
  });
  // The slot round after the genuine ones is open: RoundOpened and BettingClosed, no result yet.
  let slotState = initialState('slot');
  for (const r of rounds.filter((x) => x.game_slug === 'slot')) slotState = evolve(slotState, r);
  const open = openRound(nextRound(slotState, chains), Date.now(), 3000, 1);
  await producer.send({
    topic,
    acks: -1,
    messages: [open, closeBetting(open, Date.now())].map((e) => ({
      key: 'slot',
      value: encodeRoundEvent(e),
    })),
  });
  await producer.disconnect();
});

afterAll(async () => {
  const admin = kafka.admin();
  await admin.connect();
  await admin.deleteTopics({ topics: [topic] }).catch(() => {});
  await admin.disconnect();
});

describe('verify CLI with --round', () => {
  it('finds a round and its predecessor in the log, paging back in small chunks', async () => {
    const { round, previous } = await findRound(kafka, topic, 'crash', ROUND_ID_BASE + 1, { chunk: 3 });
    expect(round.round_id).toBe(ROUND_ID_BASE + 1);
    expect(previous).toBeNull();
    const mid = await findRound(kafka, topic, 'slot', 3 * ROUND_ID_BASE + 5, { chunk: 3 });
    expect(mid.previous?.round_id).toBe(3 * ROUND_ID_BASE + 4);
    await expect(findRound(kafka, topic, 'slot', 3 * ROUND_ID_BASE + 99)).rejects.toThrow(RoundNotFoundError);
  });

  it('verifies a genuine round, including the link to the round before it', async () => {
    const r = await cli('--game', 'wall-street', '--round', String(4 * ROUND_ID_BASE + 5));
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/chain: +OK/);
    expect(r.out).toMatch(/link: +OK/);
    expect(r.out).toMatch(/result: +OK \(recorded = recomputed\)/);
  });

  it("verifies an external game server's round by its own commitment, with no link to the round before it", async () => {
    const r = await cli('--game', 'wall-street', '--round', String(4 * ROUND_ID_BASE + PER_GAME + 2));
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/chain: +OK/);
    expect(r.out).toMatch(/result: +OK \(recorded = recomputed\)/);
  });

  it('verifies the first round of the second epoch without a link (new chain)', async () => {
    const r = await cli('--game', 'crash', '--round', String(ROUND_ID_BASE + 9));
    expect(r.code).toBe(0);
    expect(r.out).toContain('(epoch 1, index 1)');
    expect(r.out).toMatch(/link: +not checked/);
  });

  it('prints FAIL and exits 1 for a forged result', async () => {
    const r = await cli('--game', 'double', '--round', String(FORGED_ID));
    expect(r.code).toBe(1);
    expect(r.out).toMatch(/chain: +OK/);
    expect(r.out).toMatch(/result: +FAIL/);
    expect(r.out.split('\n').at(-1)).toBe('FAIL');
  });

  it('exits 2 for a round that is not in the log or belongs to another game', async () => {
    expect(await cli('--game', 'crash', '--round', String(ROUND_ID_BASE + 500))).toMatchObject({ code: 2 });
    const other = await cli('--game', 'crash', '--round', String(3 * ROUND_ID_BASE + 1));
    expect(other.code).toBe(2);
    expect(other.err).toMatch(/not in/);
  });

  it('reports a round that is open as OPEN with its chain position, not as a failure', async () => {
    const id = 3 * ROUND_ID_BASE + PER_GAME + 1;
    const r = await cli('--game', 'slot', '--round', String(id));
    expect(r.code).toBe(0);
    expect(r.out).toMatch(new RegExp(`^round: +${id} \\(epoch \\d+, index \\d+\\)`));
    expect(r.out.split('\n').at(-1)).toMatch(/^OPEN/);
    await expect(findRound(kafka, topic, 'slot', id)).rejects.toBeInstanceOf(RoundOpenError);
  });

  it('works as the real process (npm run verify) with exit status 0 and 1', async () => {
    const env = { ...process.env, TOPIC_NAMESPACE: ns };
    const args = ['--import', 'tsx', 'services/round-engine/verify-cli.ts'];
    const ok = await run(
      process.execPath,
      [...args, '--game', 'slot', '--round', String(3 * ROUND_ID_BASE + 7)],
      {
        cwd: ROOT,
        env,
        timeout: 60_000,
      },
    );
    expect(ok.stdout.trim().split('\n').at(-1)).toBe('OK');
    const failed = run(process.execPath, [...args, '--game', 'double', '--round', String(FORGED_ID)], {
      cwd: ROOT,
      env,
      timeout: 60_000,
    });
    await expect(failed).rejects.toMatchObject({ code: 1 });
  });
});
