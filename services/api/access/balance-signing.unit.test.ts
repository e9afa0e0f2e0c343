/**
 * The API's balance request signs with every valid secret of the operator's row (a rotation's
 * overlap gives two signatures, docs/decisions/money/0014-signing-secret-rotation-with-overlap.md).
 * The row types make the rotation's columns required, so a caller that lists the columns it reads
 * without them does not compile (the `@ts-expect-error` lines below: `npx tsc --noEmit` reports an
 * unused directive when the compiler lets such a caller through), and the signature is checked at
 * run time with standardwebhooks against each secret.
 */
import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { rowSigningSecrets } from '../../../lib/db/operator-config.ts';
import { signHeaders } from '../../../lib/http/callback-client.ts';
import { fetchOperatorBalance } from './balance.ts';
import type { OperatorRow } from './guards.ts';

const NEW = `whsec_${Buffer.alloc(32, 2).toString('base64')}`;
const OLD = `whsec_${Buffer.alloc(32, 1).toString('base64')}`;
const T0 = Date.UTC(2026, 0, 1, 12);

describe('signing secrets of an operators row', () => {
  it('are both secrets during the overlap and the new one after it', () => {
    const row: Pick<
      OperatorRow,
      'signing_secret' | 'previous_signing_secret' | 'previous_secret_valid_until'
    > = {
      signing_secret: NEW,
      previous_signing_secret: OLD,
      previous_secret_valid_until: new Date(T0 + 60_000),
    };
    expect(rowSigningSecrets(row, T0)).toEqual([NEW, OLD]);
    expect(rowSigningSecrets(row, T0 + 60_000)).toEqual([NEW]);
    const h = signHeaders('balance-1', '{}', rowSigningSecrets(row, T0), Date.now());
    for (const secret of [NEW, OLD]) expect(() => new Webhook(secret).verify('{}', h)).not.toThrow();
  });

  it('cannot be asked of a row read without the rotation columns (compile time)', () => {
    const lean = { signing_secret: NEW };
    // @ts-expect-error the rotation's columns are required: without them the old secret would not sign
    expect(rowSigningSecrets(lean, T0)).toEqual([NEW]);
    const balanceOf = () =>
      fetchOperatorBalance(
        // @ts-expect-error the balance request needs the rotation's columns as well
        { base_url: 'http://op.test', balance_path: '/balance', signing_secret: NEW, timeout_ms: 1000 },
        { user_id: 'u', currency: 'USD', session_token: 't' },
      );
    expect(typeof balanceOf).toBe('function');
  });
});
