/**
 * Signing-secret rotation in `operators` (migration 017) against real Postgres: `rotateSigningSecret`
 * makes a new `whsec_` secret current and keeps the replaced one signing until now + overlap;
 * `readOperatorConfig` reads both, so `signingSecretsAt` gives two secrets during the overlap and one
 * after; a second rotation inside the overlap is refused (of two at once exactly one happens) unless
 * forced, which drops the oldest; an unknown or disabled operator changes nothing, and an
 * overlap that is not a positive whole number of seconds is refused before any write.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signingSecretsAt } from '../../rules/wallet/signing.ts';
import { startCallbackSchema } from '../../tests/support/wallet-callbacks.ts';
import { RotationInProgressError } from '../errors.ts';
import { readOperatorConfig, rotateSigningSecret, rowSigningSecrets } from './operator-config.ts';
import type { Sql } from './pool.ts';

const T0 = Date.UTC(2026, 0, 1, 12);
const FIRST = `whsec_${Buffer.alloc(32, 1).toString('base64')}`;
let db: Awaited<ReturnType<typeof startCallbackSchema>>;
let sql: Sql;

beforeAll(async () => {
  db = await startCallbackSchema('t_oprot', []);
  sql = db.sql;
  for (const [id, disabled] of [
    ['op-a', false],
    ['op-off', true],
  ] as const)
    await sql`
      insert into operators (operator_id, name, token_hash, callback_form, base_url, bet_path, win_path,
        balance_path, rollback_path, signing_secret, timeout_ms, retry_policy, disabled_at)
      values (${id}, ${id}, ${`hash-${id}`}, 'A', 'http://op.test', '/bet', '/win', '/balance', '/rollback',
        ${FIRST}, 1000, ${sql.json({ retries: 1 })}, ${disabled ? new Date(T0) : null})`;
});

afterAll(async () => {
  await db?.close();
});

describe('rotateSigningSecret', () => {
  it('keeps the replaced secret signing until the overlap ends, then only the new one', async () => {
    const r = await rotateSigningSecret(sql, 'op-a', 300, T0);
    expect(r?.previousValidUntil).toBe(T0 + 300_000);
    expect(r?.signingSecret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(r?.signingSecret).not.toBe(FIRST);
    const op = await readOperatorConfig(sql, 'op-a');
    expect(op).toMatchObject({
      signingSecret: r?.signingSecret,
      previousSigningSecret: FIRST,
      previousSecretValidUntil: T0 + 300_000,
    });
    if (!op) return;
    expect(signingSecretsAt(op, T0 + 299_999)).toEqual([r?.signingSecret, FIRST]);
    expect(signingSecretsAt(op, T0 + 300_000)).toEqual([r?.signingSecret]);
    const [row] = await sql`select * from operators where operator_id = 'op-a'`;
    expect(rowSigningSecrets(row as never, T0 + 1)).toEqual([r?.signingSecret, FIRST]);

    // A second rotation inside the overlap is refused, naming until when the first secret is
    // valid, and changes nothing: the operator may still verify with that secret.
    const before = await sql`select * from operators where operator_id = 'op-a'`;
    const refused = await rotateSigningSecret(sql, 'op-a', 60, T0 + 1000).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(RotationInProgressError);
    expect((refused as RotationInProgressError).previousValidUntil).toBe(T0 + 300_000);
    expect((refused as Error).message).toContain(new Date(T0 + 300_000).toISOString());
    expect(await sql`select * from operators where operator_id = 'op-a'`).toEqual(before);

    // With force: the first secret stops signing at once.
    const r2 = await rotateSigningSecret(sql, 'op-a', 60, T0 + 1000, { force: true });
    const op2 = await readOperatorConfig(sql, 'op-a');
    expect(op2 && signingSecretsAt(op2, T0 + 1001)).toEqual([r2?.signingSecret, r?.signingSecret]);

    // Once the overlap is over, a rotation needs no force and replaces the lapsed secret.
    const r3 = await rotateSigningSecret(sql, 'op-a', 60, T0 + 61_000);
    const [row3] = await sql`select previous_signing_secret from operators where operator_id = 'op-a'`;
    expect(row3?.previous_signing_secret).toBe(r2?.signingSecret);
    expect(r3?.previousValidUntil).toBe(T0 + 121_000);
  });

  it('of two rotations at once exactly one happens; the other is refused', async () => {
    await sql`
      insert into operators (operator_id, name, token_hash, callback_form, base_url, bet_path, win_path,
        balance_path, rollback_path, signing_secret, timeout_ms, retry_policy)
      values ('op-race', 'op-race', 'hash-op-race', 'A', 'http://op.test', '/bet', '/win', '/balance',
        '/rollback', ${FIRST}, 1000, ${sql.json({ retries: 1 })})`;
    const both = await Promise.allSettled([
      rotateSigningSecret(sql, 'op-race', 300, T0),
      rotateSigningSecret(sql, 'op-race', 300, T0),
    ]);
    const won = both.flatMap((b) => (b.status === 'fulfilled' ? [b.value] : []));
    const lost = both.flatMap((b) => (b.status === 'rejected' ? [b.reason] : []));
    expect(won).toHaveLength(1);
    expect(lost).toHaveLength(1);
    expect(lost[0]).toBeInstanceOf(RotationInProgressError);
    const [row] =
      await sql`select signing_secret, previous_signing_secret from operators where operator_id = 'op-race'`;
    expect(row).toEqual({ signing_secret: won[0]?.signingSecret, previous_signing_secret: FIRST });
  });

  it('changes nothing for an unknown or disabled operator, nor for a bad overlap', async () => {
    expect(await rotateSigningSecret(sql, 'op-none', 300, T0)).toBeNull();
    expect(await rotateSigningSecret(sql, 'op-off', 300, T0)).toBeNull();
    const [off] =
      await sql`select signing_secret, previous_signing_secret from operators where operator_id = 'op-off'`;
    expect(off).toEqual({ signing_secret: FIRST, previous_signing_secret: null });
    const before = await sql`select signing_secret from operators where operator_id = 'op-a'`;
    for (const bad of [0, -5, 1.5, Number.NaN])
      await expect(rotateSigningSecret(sql, 'op-a', bad, T0)).rejects.toThrow(RangeError);
    expect(await sql`select signing_secret from operators where operator_id = 'op-a'`).toEqual(before);
  });
});
