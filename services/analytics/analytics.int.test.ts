/**
 * The analytics replay against the real broker: rounds made by the round engine's pure decider
 * over real hash chains (a few of them tampered, one without proof, one undecodable record) are
 * appended to a topic of their own with log timestamps = finished_at; the CLI then replays offset
 * ranges and time ranges in-process and as the real process, and refuses bad input.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { XMLValidator } from 'fast-xml-parser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKafka, partitionOffsets } from '../../lib/log/kafka.ts';
import { encodeRound } from '../../lib/log/rounds-codec.ts';
import { topicName } from '../../lib/log/topics.ts';
import { createLogger } from '../../lib/logger.ts';
import { GAME_SLUGS } from '../../rules/games/catalog.ts';
import type { RoundFinished } from '../../rules/rounds/round.ts';
import { chainSource, RoundMaker } from '../../tests/support/analytics.ts';
import { loadConfig } from '../../tests/support/config.ts';
import { freePort, ROOT, uniqueId } from '../../tests/support/processes.ts';
import { EXIT, runAnalytics } from './cli.ts';
import type { AnalyticsReport } from './fold.ts';

const run = promisify(execFile);
const ns = `${uniqueId('t-analytics-')}-`;
const config = loadConfig(process.env, { TOPIC_NAMESPACE: ns });
const kafka = createKafka(config, 'analytics-int', createLogger('test', 'silent'));
const topic = topicName(config, 'rounds');
const T0 = Date.UTC(2026, 0, 1);
const PER_GAME = 100;
const rounds = new RoundMaker(GAME_SLUGS, chainSource(Buffer.alloc(32, 9), 1000), T0, 1000).next(
  4 * PER_GAME,
);
const at = (i: number) => rounds[i] as RoundFinished;
// Rounds i: game GAME_SLUGS[i % 4], finished at T0 + i s. Tamper three and strip one proof.
const FORGED_RESULT = 40; // crash
rounds[FORGED_RESULT] = { ...at(FORGED_RESULT), result: { game: 'crash', point: '5000.00' } };
const FORGED_HASH = 121; // double
rounds[FORGED_HASH] = {
  ...at(FORGED_HASH),
  proof: { ...(at(FORGED_HASH).proof as NonNullable<RoundFinished['proof']>), hash: 'a'.repeat(64) },
};
const FORGED_COMMITMENT = 350; // slot
rounds[FORGED_COMMITMENT] = {
  ...at(FORGED_COMMITMENT),
  proof: {
    ...(at(FORGED_COMMITMENT).proof as NonNullable<RoundFinished['proof']>),
    commitment: 'b'.repeat(64),
  },
};
const UNPROVEN = 203; // wall-street
rounds[UNPROVEN] = { ...at(UNPROVEN), proof: null };
const FAILED_IDS = [FORGED_RESULT, FORGED_HASH, FORGED_COMMITMENT].map((i) => at(i).round_id).sort();

async function cli(...argv: string[]) {
  let out = '';
  const err: string[] = [];
  const code = await runAnalytics(argv, {
    out: (t) => {
      out += t;
    },
    err: (l) => err.push(l),
    kafka: () => ({ kafka, topic }),
  });
  return { code, out, err: err.join('\n') };
}

async function json(...argv: string[]): Promise<{ code: number; report: AnalyticsReport }> {
  const r = await cli(...argv, '--format', 'json');
  return { code: r.code, report: JSON.parse(r.out) as AnalyticsReport };
}

const iso = (ms: number) => new Date(ms).toISOString();

beforeAll(async () => {
  const admin = kafka.admin();
  await admin.connect();
  // CreateTime, unlike the real topic's LogAppendTime: the test plants rounds at historic times.
  // Kept for ever like the real topic: with the broker's default 7-day retention its periodic
  // check (every 5 min) would delete these months-old records in the middle of the run.
  await admin.createTopics({
    waitForLeaders: true,
    topics: [
      {
        topic,
        numPartitions: config.kafka.partitions,
        configEntries: [
          { name: 'message.timestamp.type', value: 'CreateTime' },
          { name: 'retention.ms', value: '-1' },
        ],
      },
    ],
  });
  await admin.disconnect();
  const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
  await producer.connect();
  await producer.send({
    topic,
    acks: -1,
    messages: rounds.map((r) => ({
      key: r.game_slug,
      value: encodeRound(r),
      timestamp: String(r.finished_at),
    })),
  });
  // A record no decoder accepts, on crash's partition, timestamped after every round.
  await producer.send({
    topic,
    acks: -1,
    messages: [{ key: 'crash', value: Buffer.from('garbage'), timestamp: String(T0 + 1e6) }],
  });
  await producer.disconnect();
});

afterAll(async () => {
  const admin = kafka.admin();
  await admin.connect();
  await admin.deleteTopics({ topics: [topic] }).catch(() => {});
  await admin.disconnect();
});

describe('analytics replay over an offset range', () => {
  it('replays the whole topic, reports every game and lists the tampered rounds by id (exit 1)', async () => {
    const { code, report } = await json('--from', 'earliest', '--to', 'latest');
    expect(code).toBe(EXIT.proofFailed);
    expect([FORGED_RESULT, FORGED_HASH, FORGED_COMMITMENT, UNPROVEN].map((i) => at(i).game_slug)).toEqual([
      'crash',
      'double',
      'slot',
      'wall-street',
    ]);
    expect(report).toMatchObject({ topic, records: 4 * PER_GAME + 1, rounds: 4 * PER_GAME, other_games: 0 });
    expect(report.undecodable.count).toBe(1);
    expect(report.fairness).toMatchObject({ checked: 4 * PER_GAME - 1, failed: 3, unproven: 1 });
    expect(report.fairness.failures.map((f) => f.round_id).sort()).toEqual(FAILED_IDS);
    expect(report.fairness.unproven_round_ids).toEqual([at(UNPROVEN).round_id]);
    // Figures against the rounds that were appended.
    const crashPoints = rounds
      .filter((r) => r.result.game === 'crash')
      .map((r) => Number((r.result as { point: string }).point));
    expect(Number(report.games.crash?.max_point)).toBe(Math.max(...crashPoints));
    const reds = rounds.filter((r) => r.result.game === 'double' && r.result.color === 'red').length;
    expect(report.games.double?.colours.find((c) => c.colour === 'red')?.count).toBe(reds);
    const ups = rounds.filter((r) => r.result.game === 'wall-street' && r.result.trending === 'up').length;
    expect(report.games['wall-street']).toMatchObject({ rounds: PER_GAME, up: ups });
    const paid = rounds.reduce((a, r) => a + (r.result.game === 'slot' ? Number(r.result.multiplier) : 0), 0);
    expect(report.games.slot?.rtp).toBeCloseTo(paid / PER_GAME, 9);
  });

  it('reads [from, to) in every partition for a plain offset, and one partition for p:o', async () => {
    const ends = await partitionOffsets(kafka, topic);
    let expected = 0;
    for (const { low, high } of ends.values()) {
      const a = 10n < low ? low : 10n > high ? high : 10n;
      const b = 60n > high ? high : 60n;
      expected += Number(b - a);
    }
    const { report } = await json('--from', '10', '--to', '60');
    expect(report.records).toBe(expected);
    expect(report.range.partitions.map((p) => p.partition)).toEqual([...ends.keys()].sort());
    const [busy] = [...ends].sort((x, y) => Number(y[1].high - x[1].high)).map(([p]) => p);
    const one = await json('--from', `${busy}:5`, '--to', `${busy}:25`);
    expect(one.report.records).toBe(20);
    expect(one.report.range.partitions).toEqual([{ partition: busy, from: '5', to: '25' }]);
  });

  it('filters games, and exits 0 when every checked proof passes', async () => {
    const { code, report } = await json('--game', 'wall-street', '--game', 'crash');
    expect(Object.keys(report.games).sort()).toEqual(['crash', 'wall-street']);
    expect(report.fairness.failures.map((f) => f.game)).toEqual(['crash']);
    expect(code).toBe(EXIT.proofFailed);
    const clean = await json('--game', 'wall-street');
    expect(clean.code).toBe(EXIT.ok);
    expect(clean.report).toMatchObject({ rounds: PER_GAME, fairness: { failed: 0, unproven: 1 } });
  });
});

describe('analytics replay over a time range', () => {
  it('selects the rounds whose log timestamps fall in [from, to) and checks them mid-chain', async () => {
    const { code, report } = await json('--from', iso(T0 + 100_000), '--to', iso(T0 + 200_000));
    expect(report.rounds).toBe(100);
    expect(report.spans.crash).toMatchObject({
      first_finished_at: T0 + 100_000,
      last_finished_at: T0 + 196_000,
    });
    expect(report.fairness).toMatchObject({ checked: 100, failed: 1 });
    expect(report.fairness.failures[0]?.round_id).toBe(at(FORGED_HASH).round_id);
    expect(code).toBe(EXIT.proofFailed);
    const clean = await json('--from', iso(T0 + 250_000), '--to', iso(T0 + 340_000));
    expect(clean).toMatchObject({
      code: EXIT.ok,
      report: { rounds: 90, fairness: { checked: 90, passed: 90 } },
    });
  });

  it('writes readable SVG charts and prints CSV and table reports', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'analytics-charts-'));
    try {
      const r = await cli(
        '--from',
        iso(T0),
        '--to',
        iso(T0 + 400_000),
        '--charts',
        join(dir, 'sub'),
        '--format',
        'csv',
      );
      expect(r.code).toBe(EXIT.proofFailed);
      expect(r.out.split('\r\n')[0]).toBe('game,section,key,observed,theoretical,note');
      expect(r.out).toContain(`crash,proof_failure,${at(FORGED_RESULT).round_id},result`);
      const files = readdirSync(join(dir, 'sub')).sort();
      expect(files).toEqual([
        'crash-distribution.svg',
        'crash-house-edge.svg',
        'double-colours.svg',
        'slot-rtp.svg',
        'wall-street-streaks.svg',
      ]);
      for (const f of files)
        expect(XMLValidator.validate(readFileSync(join(dir, 'sub', f), 'utf8'))).toBe(true);
      expect(r.err).toContain('wrote 5 charts');
      const table = await cli('--to', iso(T0 + 400_000));
      expect(table.out).toContain('provably fair: 399 checked, 396 passed, 3 FAILED, 1 without proof');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('bad input', () => {
  it.each([
    [
      ['--from', '2026-01-02T00:00:00Z', '--to', '2026-01-01T00:00:00Z'],
      /--from 2026-01-02T00:00:00Z is after --to/,
    ],
    [['--from', '50', '--to', '10'], /--from offset 50 is after --to offset 10/],
    [['--from', iso(T0 + 300_000), '--to', '0'], /--from is after --to in partition/],
    [['--from', '7:0'], /has no partition 7/],
    [['--format', 'xml'], /argument 'xml' is invalid. Allowed choices are table, csv, json/],
    [['--game', 'poker'], /unknown game "poker"/],
    [['--from', 'yesterday'], /not a time \(ISO 8601 with a zone/],
    [['--from', '2026-01-01T10:00'], /not a time/],
    [['--bogus'], /unknown option '--bogus'/],
  ])('%j exits 2 with a clear message', async (argv, message) => {
    const r = await cli(...argv);
    expect(r.code).toBe(EXIT.badInput);
    expect(r.err).toMatch(message);
    expect(r.out).toBe('');
  });

  it('a topic that does not exist exits 3', async () => {
    const err: string[] = [];
    const code = await runAnalytics([], {
      out: () => expect.fail('no report expected'),
      err: (l) => err.push(l),
      kafka: () => ({ kafka, topic: `${ns}missing-rounds` }),
    });
    expect(code).toBe(EXIT.logUnavailable);
    expect(err.join('\n')).toBe(`error: topic ${ns}missing-rounds does not exist on the broker`);
  });
});

describe('as the real process (npm run analytics)', () => {
  const args = ['--import', 'tsx', 'services/analytics/cli.ts'];

  it('prints the JSON report on stdout and exits 1 for the tampered rounds', async () => {
    const p = run(process.execPath, [...args, '--format', 'json', '--no-progress'], {
      cwd: ROOT,
      env: { ...process.env, TOPIC_NAMESPACE: ns },
      timeout: 60_000,
      maxBuffer: 16 * 1024 * 1024,
    });
    const failed = await p.then(
      () => expect.fail('expected exit 1'),
      (e: { code: number; stdout: string; stderr: string }) => e,
    );
    expect(failed.code).toBe(EXIT.proofFailed);
    expect((JSON.parse(failed.stdout) as AnalyticsReport).fairness.failed).toBe(3);
    expect(failed.stderr).toContain('3 round(s) failed the provably-fair check');
  });

  it('exits 3 with one clear line when the broker is unreachable', async () => {
    const port = await freePort();
    const started = Date.now();
    const failed = await run(process.execPath, args, {
      cwd: ROOT,
      env: { ...process.env, TOPIC_NAMESPACE: ns, KAFKA_BROKERS: `127.0.0.1:${port}` },
      timeout: 60_000,
    }).then(
      () => expect.fail('expected exit 3'),
      (e: { code: number; stdout: string; stderr: string }) => e,
    );
    expect(failed.code).toBe(EXIT.logUnavailable);
    expect(failed.stderr).toMatch(
      new RegExp(`error: cannot reach the broker: .*ECONNREFUSED 127.0.0.1:${port}`),
    );
    expect(failed.stdout).toBe('');
    expect(Date.now() - started).toBeLessThan(30_000);
  });
});
