import { describe, expect, it } from 'vitest';
import { encodeRound } from '../../lib/log/rounds-codec.ts';
import type { RoundFinished } from '../../rules/rounds/round.ts';
import { chainSource, RoundMaker } from '../../tests/support/analytics.ts';
import { ReplayFold } from './fold.ts';
import { CSV_HEADER, toCsv } from './format-csv.ts';
import { textTable, toTable } from './format-table.ts';

const META = {
  topic: 't-rounds',
  range: { from: 'earliest', to: 'latest', partitions: [{ partition: 0, from: '0', to: '42' }] },
  elapsed_ms: 5,
};

/** 40 genuine rounds (10 per game), one forged crash point, one unproven round, one bad record. */
function report(
  games: ConstructorParameters<typeof ReplayFold>[0] = ['crash', 'double', 'slot', 'wall-street'],
) {
  const rounds = new RoundMaker(
    ['crash', 'double', 'slot', 'wall-street'],
    chainSource(Buffer.alloc(32, 3), 100),
  ).next(40);
  const forged: RoundFinished = {
    ...(rounds[4] as RoundFinished),
    result: { game: 'crash', point: '1000.00' },
  };
  rounds[4] = forged;
  rounds[8] = { ...(rounds[8] as RoundFinished), proof: null };
  const fold = new ReplayFold(games);
  rounds.forEach((r, i) => {
    fold.add(0, String(i), encodeRound(r));
  });
  fold.add(0, '40', Buffer.from('not avro'));
  return { report: fold.report(META), forged, unproven: rounds[8] as RoundFinished };
}

describe('replay fold', () => {
  it('folds records into per-game figures with the proof check on the way', () => {
    const { report: r, forged, unproven } = report();
    expect(r).toMatchObject({ topic: 't-rounds', records: 41, rounds: 40, other_games: 0, elapsed_ms: 5 });
    expect(r.undecodable.count).toBe(1);
    expect(r.undecodable.first[0]).toMatchObject({ partition: 0, offset: '40' });
    expect(r.fairness).toMatchObject({ checked: 39, passed: 38, failed: 1, unproven: 1 });
    expect(r.fairness.failures).toEqual([
      { round_id: forged.round_id, game: 'crash', reason: 'result', partition: 0, offset: '4' },
    ]);
    expect(r.fairness.unproven_round_ids).toEqual([unproven.round_id]);
    // Statistics count the rounds as recorded, forged ones included (what was shown and paid).
    expect(r.games.crash).toMatchObject({ rounds: 10, max_point: expect.any(String) });
    expect(Number(r.games.crash?.max_point)).toBeGreaterThanOrEqual(1000);
    expect(r.games.double?.rounds).toBe(10);
    expect(r.games.slot?.rounds).toBe(10);
    expect(r.games['wall-street']?.up).toBe(10 - (r.games['wall-street']?.down ?? 0));
    expect(r.spans.crash?.first_round_id).toBe(1_000_000_000_001);
  });

  it('reports only the selected games and counts the others', () => {
    const { report: r } = report(['double']);
    expect(Object.keys(r.games)).toEqual(['double']);
    expect(r).toMatchObject({ rounds: 10, other_games: 30 });
    expect(r.fairness.checked).toBe(10);
  });
});

describe('report formats', () => {
  const { report: r } = report();

  it('CSV: a header, one quoted-when-needed row per figure, every row six cells', () => {
    const csv = toCsv(r);
    const lines = csv.trimEnd().split('\r\n');
    expect(lines[0]).toBe(CSV_HEADER.join(','));
    expect(lines).toContain('all,fairness,failed,1,,');
    expect(lines).toContain(
      'double,colour,white,' +
        r.games.double?.colours[0]?.share +
        ',' +
        1 / 15 +
        ',' +
        `${r.games.double?.colours[0]?.count} rounds`,
    );
    expect(
      lines.some((l) =>
        l.startsWith(`crash,proof_failure,${r.fairness.failures[0]?.round_id},result,,partition 0 offset 4`),
      ),
    ).toBe(true);
    expect(lines).toContain(
      'crash,distribution,"[1.00,1.01)",' +
        r.games.crash?.buckets[0]?.share +
        ',' +
        r.games.crash?.buckets[0]?.theoretical +
        `,${r.games.crash?.buckets[0]?.count} rounds`,
    );
    // Six cells per line once quoted commas are accounted for.
    for (const l of lines) expect(l.replace(/"[^"]*"/g, 'q').split(',')).toHaveLength(6);
  });

  it('JSON carries the whole report', () => {
    expect(JSON.parse(JSON.stringify(r))).toEqual(JSON.parse(JSON.stringify(r)));
    expect(JSON.parse(JSON.stringify(r)).fairness.failures[0].reason).toBe('result');
  });

  it('table: header lines, the failed round, and one block per game', () => {
    const t = toTable(r);
    expect(t).toContain('41 records, 40 rounds of the selected games, 0 of others, 1 undecodable');
    expect(t).toContain('provably fair: 39 checked, 38 passed, 1 FAILED, 1 without proof');
    expect(t).toMatch(new RegExp(`${r.fairness.failures[0]?.round_id}\\s+crash\\s+result\\s+0\\s+4`));
    for (const head of ['crash: 10 rounds', 'double: 10 rounds', 'slot: 10 rounds', 'wall-street: 10 rounds'])
      expect(t).toContain(head);
    expect(t).toContain('paytable 96.481%');
  });

  it('textTable pads columns: first left-aligned, others right-aligned', () => {
    expect(
      textTable(
        ['a', 'bb'],
        [
          ['xyz', '1'],
          ['q', '222'],
        ],
      ),
    ).toBe('a     bb\n---  ---\nxyz    1\nq    222');
  });
});
