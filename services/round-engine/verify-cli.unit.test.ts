import { describe, expect, it } from 'vitest';
import { buildChain } from '../../rules/fairness/chain.ts';
import { runVerify } from './verify-cli.ts';

const chain = buildChain(Buffer.alloc(32), 'crash', 0, 10);
const hex = (i: number) => chain.hashAt(i).toString('hex');

async function cli(...argv: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runVerify(argv, {
    out: (l) => out.push(l),
    err: (l) => err.push(l),
    kafka: () => {
      throw new Error('no broker in unit tests');
    },
  });
  return { code, out: out.join('\n'), err: err.join('\n') };
}

describe('verify CLI (revealed hash form)', () => {
  it('prints the recomputed result and OK, exit 0', async () => {
    const r = await cli(
      '--game',
      'crash',
      '--hash',
      hex(3),
      '--index',
      '3',
      '--commitment',
      chain.commitment,
    );
    expect(r.code).toBe(0);
    expect(r.out).toContain('result:     {"point":"8.64"}');
    expect(r.out).toMatch(/chain: +OK/);
    expect(r.out.split('\n').at(-1)).toBe('OK');
  });

  it('checks the link to the previous hash when given', async () => {
    const base = ['--game', 'crash', '--hash', hex(3), '--index', '3', '--commitment', chain.commitment];
    expect((await cli(...base, '--previous', hex(2))).code).toBe(0);
    const bad = await cli(...base, '--previous', hex(1));
    expect(bad.code).toBe(1);
    expect(bad.out).toMatch(/link: +FAIL/);
  });

  it('prints FAIL and exits 1 for a tampered hash or a wrong index', async () => {
    const tampered = `${hex(3).slice(0, 63)}${hex(3).endsWith('0') ? '1' : '0'}`;
    const r = await cli(
      '--game',
      'crash',
      '--hash',
      tampered,
      '--index',
      '3',
      '--commitment',
      chain.commitment,
    );
    expect(r.code).toBe(1);
    expect(r.out.split('\n').at(-1)).toBe('FAIL');
    expect(
      (await cli('--game', 'crash', '--hash', hex(3), '--index', '4', '--commitment', chain.commitment)).code,
    ).toBe(1);
  });

  it.each([
    [
      ['--game', 'poker', '--hash', 'a'.repeat(64), '--index', '1', '--commitment', 'b'.repeat(64)],
      /unknown game/,
    ],
    [['--game', 'crash', '--hash', 'zz', '--index', '1', '--commitment', 'b'.repeat(64)], /64 hex/],
    [
      ['--game', 'crash', '--hash', 'a'.repeat(64), '--index', '0', '--commitment', 'b'.repeat(64)],
      /positive integer/,
    ],
    [['--game', 'crash', '--hash', 'a'.repeat(64)], /--hash, --index and --commitment/],
    [['--game', 'crash', '--round', '12', '--hash', 'a'.repeat(64)], /cannot be combined/],
    [['--hash', 'a'.repeat(64)], /--game/],
  ])('rejects bad input %j with exit 2 and a clear message', async (argv, message) => {
    const r = await cli(...argv);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(message);
  });
});
