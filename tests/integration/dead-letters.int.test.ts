/**
 * The dead-letter command's topics on a real broker and Postgres: records the rounds projector really
 * dead-lettered, and wallet events a checkpointed consumer refused, as lib/log/dead-letter.ts writes
 * them (parked callbacks are rows in Postgres now: services/dead-letters/callbacks.int.test.ts);
 * list, show, and replay by offset, tx id, reason or all, with a dry run, once per record (the
 * ledger); bad input (unknown topic, offset out of range, nothing matching, malformed arguments, a
 * missing topic) is refused with a clear message and appends nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deadLetterMessage } from '../../lib/log/dead-letter.ts';
import { partitionOffsets, readRange } from '../../lib/log/kafka.ts';
import { encodeRound } from '../../lib/log/rounds-codec.ts';
import { ensureTopics, topicName } from '../../lib/log/topics.ts';
import { encodeEvent, type WalletEvent } from '../../lib/log/wallet-events.ts';
import { createLogger } from '../../lib/logger.ts';
import { ROUNDS_PROJECTION } from '../../lib/projections/specs.ts';
import { runDeadLettersCli } from '../../services/dead-letters/cli.ts';
import { buildRoundsProjector, type RoundsProjector } from '../../services/projector/projector.ts';
import { waitFor } from '../support/poll.ts';
import { createTestEnv, roundMessage, sampleRound, type TestEnv } from '../support/projector.ts';
import { placed } from '../support/settlement.ts';

let e: TestEnv;
let projector: RoundsProjector;
const logger = createLogger('dlq-test', 'silent');
const T0 = Date.UTC(2026, 0, 1);
const topics = () => ({
  rounds: e.topic,
  roundsDlq: e.dlqTopic,
  wallet: topicName(e.config, 'walletTransactions'),
  walletDlq: topicName(e.config, 'walletDeadLetter'),
  ledger: topicName(e.config, 'deadLetterReplays'),
});

/** Runs the command line in-process; returns status and what it printed. */
async function cli(...argv: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runDeadLettersCli(
    argv,
    { out: (s) => out.push(s), err: (s) => err.push(s) },
    {
      env: { ...process.env, ...e.env },
      kafka: e.kafka,
      logger,
    },
  );
  return { code, out: out.join('\n'), err: err.join('\n') };
}

/** Sum of high-water marks of every topic involved: unchanged means nothing was appended. */
async function ends(): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  const admin = e.kafka.admin();
  await admin.connect();
  const existing = new Set(await admin.listTopics());
  await admin.disconnect();
  for (const [k, t] of Object.entries(topics())) {
    // A missing topic (the ledger before the first replay) counts as empty; kafkajs would retry it.
    const offs = existing.has(t) ? await partitionOffsets(e.kafka, t) : new Map<number, { high: bigint }>();
    out[k] = String([...offs.values()].reduce((s, o) => s + o.high, 0n));
  }
  return out;
}

/** A wallet record dead-lettered by the checkpointed consumer `projection` (lib/log/dead-letter.ts). */
function poison(value: Buffer, offset: number, reason: string, projection = 'wallet') {
  return deadLetterMessage(
    {
      message: {
        key: Buffer.from('op-1:u-1'),
        value,
        offset: String(offset),
        timestamp: String(T0),
        attributes: 0,
        headers: { trace: 'abc' },
      } as never,
      reason,
    },
    { topic: topicName(e.config, 'walletTransactions'), partition: 0, projection },
  );
}

const settled = (tx: number): WalletEvent => ({
  type: 'BetSettled',
  value: {
    tx_id: tx,
    bet: placed(tx, 'crash', 1).value.bet,
    outcome: 'won',
    payout_minor: 2000,
    win_tx_id: tx + 1,
    at: T0,
  },
});

beforeAll(async () => {
  e = await createTestEnv('dlq', { TOPIC_PARTITIONS: '2' });
  const admin = e.kafka.admin();
  await admin.connect();
  await ensureTopics(admin, e.config, ['walletTransactions', 'walletDeadLetter']);
  await admin.disconnect();
  // The rounds projector dead-letters two bad records for real (one key: one partition).
  await e.producer.send({
    topic: e.topic,
    messages: [
      roundMessage(sampleRound('crash', 1, T0)),
      { key: 'crash', value: Buffer.from('garbage bytes') },
      {
        key: 'crash',
        value: Buffer.concat([
          Buffer.from([0, 0, 0, 0x0f, 0xff]),
          encodeRound(sampleRound('crash', 9, T0)).subarray(5),
        ]),
      },
    ],
  });
  projector = buildRoundsProjector({ config: e.config, kafka: e.kafka, sql: e.sql, logger });
  await projector.start();
  await waitFor('two dead letters', async () => {
    const o = await partitionOffsets(e.kafka, e.dlqTopic);
    return [...o.values()].reduce((s, x) => s + x.high, 0n) === 2n ? true : undefined;
  });
  // A record dead-lettered back when it did not decode, which decodes now (say, a schema deployed since).
  const fixable = roundMessage(sampleRound('crash', 2, T0 + 1000));
  await e.producer.send({
    topic: e.dlqTopic,
    messages: [
      deadLetterMessage(
        {
          message: { ...fixable, offset: '77', timestamp: String(T0), attributes: 0, headers: {} } as never,
          reason: 'unknown schema id 1',
        },
        { topic: e.topic, partition: 0, projection: ROUNDS_PROJECTION },
      ),
    ],
  });
  await e.producer.send({
    topic: topics().walletDlq,
    messages: [
      poison(encodeEvent(settled(100)), 10, 'value out of range for type bigint'),
      poison(encodeEvent(settled(200)), 20, 'unknown schema id 99', 'settlement'),
      poison(encodeEvent(settled(300)), 30, 'value out of range for type bigint'),
      poison(Buffer.from('not avro'), 40, 'bad magic byte 110', 'wallet-saga'),
    ],
  });
}, 90_000);

afterAll(async () => {
  await projector?.stop();
  const admin = e.kafka.admin();
  await admin.connect();
  const t = topics();
  await admin.deleteTopics({ topics: [t.walletDlq, t.ledger] }).catch(() => {});
  await admin.disconnect();
  await e?.close();
});

describe('dead-letters list and show', () => {
  it('lists both topics per partition with offsets, reason, source and tx id', async () => {
    const r = await cli('list', '--json');
    expect(r.code).toBe(0);
    const [rounds, wallet] = JSON.parse(r.out) as {
      name: string;
      partitions: { records: number }[];
      records: Record<string, unknown>[];
    }[];
    expect(rounds?.name).toBe('rounds');
    expect(rounds?.partitions.reduce((s, p) => s + p.records, 0)).toBe(3);
    expect(rounds?.records).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          reason: 'bad magic byte 103',
          source: expect.stringMatching(new RegExp(`^${e.topic}/\\d/1$`)),
          replays: 0,
        }),
        expect.objectContaining({
          reason: 'unknown schema id 4095',
          source: expect.stringMatching(new RegExp(`^${e.topic}/\\d/2$`)),
        }),
      ]),
    );
    expect(wallet?.records.map((x) => [x.txId, x.kind, x.reason, x.source])).toEqual(
      expect.arrayContaining([
        [100, 'BetSettled', 'value out of range for type bigint', `${topics().wallet}/0/10`],
        [200, 'BetSettled', 'unknown schema id 99', `${topics().wallet}/0/20`],
        [null, null, 'bad magic byte 110', `${topics().wallet}/0/40`],
      ]),
    );
    const text = await cli('list', 'wallet');
    expect(text.out).toContain(topics().walletDlq);
    expect(text.out).toMatch(/tx 200 BetSettled .*unknown schema id 99/);
    expect(text.out).not.toContain(e.dlqTopic);
  });

  it('shows one record with its headers and the decoded value, or why it does not decode', async () => {
    const rows = JSON.parse((await cli('list', 'wallet', '--json')).out)[0].records as {
      partition: number;
      offset: string;
      txId: number;
    }[];
    const at = rows.find((x) => x.txId === 200) as unknown as { partition: number; offset: string };
    const w = await cli('show', 'wallet-transactions.dead-letter', `${at.partition}:${at.offset}`);
    expect(w.code).toBe(0);
    const shown = JSON.parse(w.out);
    expect(shown).toMatchObject({
      key: 'op-1:u-1',
      headers: { trace: 'abc', 'dlq-reason': 'unknown schema id 99', 'dlq-projection': 'settlement' },
      decoded: { type: 'BetSettled', value: { tx_id: 200, outcome: 'won', win_tx_id: 201 } },
      decodeError: null,
      replayedTo: [],
    });
    const garbage = (
      JSON.parse((await cli('list', 'rounds', '--json')).out)[0].records as Record<string, string>[]
    ).find((x) => x.reason === 'bad magic byte 103') as unknown as { partition: number; offset: string };
    const g = JSON.parse((await cli('show', 'rounds', `${garbage.partition}:${garbage.offset}`)).out);
    expect(g).toMatchObject({ decoded: null, decodeError: 'bad magic byte 103', valueBytes: 13 });
  });
});

describe('dead-letters replay', () => {
  it('a dry run says what would be replayed and appends nothing', async () => {
    const before = await ends();
    const r = await cli('replay', 'wallet', '--reason', 'OUT OF RANGE', '--dry-run', '--json');
    expect(r.code).toBe(0);
    const out = JSON.parse(r.out);
    expect(out).toMatchObject({ dryRun: true, matched: 2, alreadyReplayed: [], undecodable: [] });
    expect(out.replayed).toHaveLength(2);
    expect(out.replayed.every((x: { to: unknown }) => x.to === null)).toBe(true);
    expect(await ends()).toEqual(before);
  });

  it('replays by tx id once, to the source topic without the dead-letter headers; --all the rest that decodes', async () => {
    const r = await cli('replay', 'wallet', '--tx-id', '200');
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/1 matched; replayed 1 to/);
    const copies: { headers: Record<string, string>; value: Buffer | null }[] = [];
    await readRange(
      e.kafka,
      topics().wallet,
      new Map([
        [0, 0n],
        [1, 0n],
      ]),
      (x) => {
        copies.push({
          headers: Object.fromEntries(
            Object.entries(x.message.headers ?? {}).map(([k, v]) => [k, String(v)]),
          ),
          value: x.message.value,
        });
      },
    );
    expect(copies).toHaveLength(1);
    expect(copies[0]?.value).toEqual(encodeEvent(settled(200)));
    expect(copies[0]?.headers).toEqual({
      trace: 'abc',
      'replayed-from': expect.stringMatching(new RegExp(`^${topics().walletDlq}/\\d/\\d+$`)),
    });

    const again = await cli('replay', 'wallet', '--tx-id', '200');
    expect(again.code).toBe(0);
    expect(again.out).toMatch(/replayed 0 to[\s\S]*skipped .*replayed at/);
    // --all: the two others that decode; the one replayed, and the one that does not decode, skipped.
    const all = JSON.parse((await cli('replay', 'wallet', '--all', '--json')).out);
    expect(all.replayed).toHaveLength(2);
    expect(all.alreadyReplayed).toHaveLength(1);
    expect(all.undecodable).toEqual([
      expect.objectContaining({ reason: expect.stringMatching(/magic byte/) }),
    ]);
    const shown = JSON.parse((await cli('list', 'wallet', '--json')).out)[0].records as {
      replays: number;
      txId: number | null;
    }[];
    expect(shown.map((x) => [x.txId, x.replays]).sort()).toEqual(
      [
        [100, 1],
        [200, 1],
        [300, 1],
        [null, 0],
      ].sort(),
    );
  });

  it('replays a rounds record by offset when it decodes now, skips one that still does not unless forced', async () => {
    const rows = JSON.parse((await cli('list', 'rounds', '--json')).out)[0].records as Record<
      string,
      string
    >[];
    const fixable = rows.find((x) => x.reason === 'unknown schema id 1') as unknown as {
      partition: number;
      offset: string;
    };
    const stuck = rows.find((x) => x.reason === 'bad magic byte 103') as unknown as {
      partition: number;
      offset: string;
    };
    const r = JSON.parse(
      (
        await cli(
          'replay',
          'rounds',
          '--offset',
          `${fixable.partition}:${fixable.offset}`,
          '--offset',
          `${stuck.partition}:${stuck.offset}`,
          '--json',
        )
      ).out,
    );
    expect(r.replayed.map((x: { offset: string }) => x.offset)).toEqual([fixable.offset]);
    expect(r.undecodable).toEqual([
      expect.objectContaining({ offset: stuck.offset, reason: 'bad magic byte 103' }),
    ]);
    // The projector projects the replayed round.
    await waitFor('the replayed round projected', async () => {
      const [row] = await e.sql`select 1 from rounds where round_id = ${1_000_000_000_002}`;
      return row ? true : undefined;
    });
    const forced = await cli(
      'replay',
      'rounds',
      '--offset',
      `${stuck.partition}:${stuck.offset}`,
      '--force',
      '--json',
    );
    expect(JSON.parse(forced.out).replayed).toHaveLength(1);
  });
});

describe('dead-letters bad input', () => {
  it('refuses with a clear message and appends nothing', async () => {
    const before = await ends();
    const cases: [string[], number, RegExp][] = [
      [
        ['list', 'nope'],
        2,
        /UNKNOWN_TOPIC: unknown dead-letter topic "nope"; one of: rounds \(rounds.dead-letter\), wallet/,
      ],
      [['replay', 'nope', '--all'], 2, /UNKNOWN_TOPIC/],
      [
        ['show', 'wallet', '0:999999'],
        1,
        /OFFSET_OUT_OF_RANGE: .* has no record at 0:999999 \(partition 0 holds offsets/,
      ],
      [
        ['replay', 'wallet', '--offset', '7:0'],
        1,
        /OFFSET_OUT_OF_RANGE: .* 7:0 is out of range \(partitions: 0, 1\)/,
      ],
      [
        ['replay', 'wallet', '--tx-id', '999999'],
        1,
        /NOTHING_MATCHES: no record of .* matches --tx-id 999999/,
      ],
      [['replay', 'wallet', '--tx-id', '12x'], 2, /option '--tx-id <id>' argument '12x' is invalid/],
      [['replay', 'wallet', '--reason', 'no such reason'], 1, /NOTHING_MATCHES/],
      [
        ['replay', 'rounds', '--tx-id', '1'],
        2,
        /BAD_SELECTION: --tx-id selects wallet events by tx_id; rounds records have none/,
      ],
      [['replay', 'wallet'], 2, /BAD_SELECTION: nothing selected/],
      [['replay', 'wallet', '--all', '--tx-id', '200'], 2, /--all and a selection exclude each other/],
      [['replay', 'wallet', '--offset', 'abc'], 2, /expected partition:offset, e.g. 0:12; got "abc"/],
      [['replay', 'wallet', '--reason', '('], 2, /not a regular expression/],
      [['frobnicate'], 2, /unknown command 'frobnicate'/],
    ];
    for (const [argv, code, message] of cases) {
      const r = await cli(...argv);
      expect({ argv, code: r.code }).toEqual({ argv, code });
      expect(r.err).toMatch(message);
    }
    let said = '';
    const other = await runDeadLettersCli(
      ['list', 'rounds'],
      {
        out: () => {},
        err: (s) => {
          said += s;
        },
      },
      { env: { ...process.env, ...e.env, TOPIC_NAMESPACE: 'no-such-namespace-' }, kafka: e.kafka, logger },
    );
    expect(other).toBe(1);
    expect(said).toMatch(/TOPIC_MISSING: topic no-such-namespace-rounds.dead-letter does not exist/);
    expect(await ends()).toEqual(before);
  });
});
