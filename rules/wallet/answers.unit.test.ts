/**
 * The table of operator answers (docs/decisions/wallet-answers/0001-answer-table.md), row by row, under
 * each preset.
 */
import { describe, expect, it } from 'vitest';
import { type AnsweredRequest, AnswerTableError, answerTable, classifyAnswer } from './answers.ts';

const bet: AnsweredRequest = {
  kind: 'bet',
  echoes: false,
  body: { user_id: 'u1', currency: 'EUR', provider: 'casino-platform', provider_tx_id: 40, amount: 12.5 },
};
const win: AnsweredRequest = { ...bet, kind: 'win', body: { ...bet.body, provider_tx_id: 41, amount: 30 } };
const rollback: AnsweredRequest = {
  ...bet,
  kind: 'rollback',
  echoes: true,
  body: { ...bet.body, provider_tx_id: 42 },
};
const close: AnsweredRequest = { ...win, kind: 'close', body: { ...win.body, amount: 0 } };
const ack = { operator_tx_id: 'o-1', old_balance: '10.00', new_balance: '22.50' };
const err = (code: string) => JSON.stringify({ error: { code, message: 'm' } });
const seed = answerTable('seed');
const http = answerTable('http-status');
const inBody = answerTable('status-in-body');

describe('success', () => {
  it('200 with operator_tx_id and decimal-string balances is ok under seed and http-status', () => {
    for (const t of [seed, http])
      expect(classifyAnswer(t, bet, 200, JSON.stringify(ack))).toEqual({
        class: 'ok',
        ack: { operatorTxId: 'o-1', oldBalance: '10.00', newBalance: '22.50' },
      });
    expect(classifyAnswer(http, bet, 201, JSON.stringify(ack)).class).toBe('ok');
    expect(classifyAnswer(seed, bet, 201, JSON.stringify(ack)).class).toBe('failed'); // the seed lists 200 only
  });

  it('status-in-body: RS_OK in a 200 is ok; any other HTTP status fails', () => {
    expect(classifyAnswer(inBody, bet, 200, JSON.stringify({ ...ack, status: 'RS_OK' })).class).toBe('ok');
    expect(classifyAnswer(inBody, bet, 500, JSON.stringify({ ...ack, status: 'RS_OK' })).class).toBe(
      'failed',
    );
  });

  it('rollbacks and form B echo the identity fields, which must match', () => {
    expect(classifyAnswer(seed, rollback, 200, JSON.stringify(ack)).class).toBe('failed');
    const echoed = {
      ...ack,
      user_id: 'u1',
      currency: 'EUR',
      provider: 'casino-platform',
      provider_tx_id: '42',
    };
    expect(classifyAnswer(seed, rollback, 200, JSON.stringify(echoed)).class).toBe('ok');
    expect(
      classifyAnswer(seed, rollback, 200, JSON.stringify({ ...echoed, provider_tx_id: '43' })).class,
    ).toBe('failed');
  });
});

describe('refusals move no money (bet rejected, no rollback)', () => {
  it.each([
    ['INSUFFICIENT_FUNDS', 402, 'INSUFFICIENT_FUNDS'],
    ['LIMIT_REACHED', 403, 'LIMIT_REACHED'],
    ['PLAYER_BLOCKED', 403, 'PLAYER_BLOCKED'],
    ['SELF_EXCLUDED', 403, 'SELF_EXCLUDED'],
    ['SESSION_EXPIRED', 401, 'SESSION_EXPIRED'],
    ['BET_ROLLED_BACK', 409, 'BET_ROLLED_BACK'],
  ])('%s in a %i error body', (code, status, ours) => {
    for (const t of [seed, http])
      expect(classifyAnswer(t, bet, status, err(code))).toMatchObject({ class: 'refused', code: ours });
  });

  it('seed: a refusal in words, a 200 with an error code and no operator_tx_id', () => {
    const a = classifyAnswer(
      seed,
      bet,
      200,
      JSON.stringify({ error: { code: 'INSUFFICIENT_FUNDS', message: 'm' } }),
    );
    expect(a).toMatchObject({ class: 'refused', code: 'INSUFFICIENT_FUNDS' });
    // With an operator_tx_id it is a success body and must carry its balances.
    expect(
      classifyAnswer(seed, bet, 200, JSON.stringify({ operator_tx_id: 'x', code: 'INSUFFICIENT_FUNDS' }))
        .class,
    ).toBe('failed');
  });

  it('http-status reads 402 and 403 alone', () => {
    expect(classifyAnswer(http, bet, 402, '')).toMatchObject({
      class: 'refused',
      code: 'INSUFFICIENT_FUNDS',
    });
    expect(classifyAnswer(http, bet, 403, 'forbidden')).toMatchObject({
      class: 'refused',
      code: 'PLAYER_BLOCKED',
    });
    expect(classifyAnswer(seed, bet, 402, '').class).toBe('failed');
  });

  it.each([
    ['RS_ERROR_NOT_ENOUGH_MONEY', 'INSUFFICIENT_FUNDS'],
    ['RS_ERROR_LIMIT_REACHED', 'LIMIT_REACHED'],
    ['RS_ERROR_USER_DISABLED', 'PLAYER_BLOCKED'],
    ['RS_ERROR_TOKEN_EXPIRED', 'SESSION_EXPIRED'],
  ])('status-in-body: %s in a 200 without operator_tx_id', (status, ours) => {
    const a = classifyAnswer(inBody, bet, 200, JSON.stringify({ status, balance: '3.00' }));
    expect(a).toMatchObject({ class: 'refused', code: ours });
  });

  it('a refusal code on a 5xx is not a refusal (seed, http-status)', () => {
    expect(classifyAnswer(seed, bet, 500, err('INSUFFICIENT_FUNDS')).class).toBe('failed');
  });
});

describe('duplicate transaction', () => {
  it('is taken as the first answer, with its balances when it gives them', () => {
    const body = JSON.stringify({ error: { code: 'DUPLICATE_TRANSACTION' }, ...ack });
    expect(classifyAnswer(http, bet, 409, body)).toEqual({
      class: 'duplicate',
      ack: { operatorTxId: 'o-1', oldBalance: '10.00', newBalance: '22.50' },
    });
    expect(classifyAnswer(seed, win, 409, err('DUPLICATE_TRANSACTION'))).toEqual({
      class: 'duplicate',
      ack: { operatorTxId: '', oldBalance: null, newBalance: null },
    });
    expect(
      classifyAnswer(
        inBody,
        bet,
        200,
        JSON.stringify({ status: 'RS_ERROR_DUPLICATE_TRANSACTION', amount: '12.50', operator_tx_id: 'o-1' }),
      ).class,
    ).toBe('duplicate');
    // Hub88: without the first answer it is the same id with other data.
    expect(
      classifyAnswer(inBody, bet, 200, JSON.stringify({ status: 'RS_ERROR_DUPLICATE_TRANSACTION' })).class,
    ).toBe('mismatch');
  });

  it('that does not match (another amount booked, or an idempotency conflict) is a mismatch for ops', () => {
    const other = JSON.stringify({ error: { code: 'DUPLICATE_TRANSACTION' }, amount: 99 });
    expect(classifyAnswer(http, bet, 409, other)).toMatchObject({
      class: 'mismatch',
      code: 'DUPLICATE_TRANSACTION',
    });
    expect(classifyAnswer(seed, bet, 409, err('IDEMPOTENCY_CONFLICT'))).toMatchObject({
      class: 'mismatch',
      code: 'IDEMPOTENCY_CONFLICT',
    });
  });
});

describe('unknown transaction', () => {
  it('completes a rollback or a round close; a bet answered so failed', () => {
    for (const code of ['UNKNOWN_TRANSACTION', 'TRANSACTION_NOT_FOUND', 'BET_NOT_FOUND']) {
      expect(classifyAnswer(seed, rollback, 404, err(code)).class).toBe('unknown_transaction');
      expect(classifyAnswer(seed, close, 409, err(code)).class).toBe('unknown_transaction');
      expect(classifyAnswer(seed, bet, 404, err(code)).class).toBe('failed');
    }
    expect(
      classifyAnswer(inBody, rollback, 200, JSON.stringify({ status: 'RS_ERROR_TRANSACTION_DOES_NOT_EXIST' }))
        .class,
    ).toBe('unknown_transaction');
  });

  it('on a win it is kept as such (the dispatcher parks it: the operator does not know the bet)', () => {
    expect(classifyAnswer(seed, win, 409, err('BET_NOT_FOUND')).class).toBe('unknown_transaction');
  });
});

describe('anything else fails (outcome unknown)', () => {
  it.each([
    ['malformed JSON', 200, '{"operator_tx_id":'],
    ['empty body', 200, ''],
    ['missing new_balance', 200, JSON.stringify({ operator_tx_id: 'x', old_balance: '1.00' })],
    ['numeric balance', 200, JSON.stringify({ ...ack, new_balance: 22.5 })],
    ['non-decimal balance', 200, JSON.stringify({ ...ack, new_balance: 'lots' })],
    ['500', 500, err('INTERNAL')],
    ['401 bad signature', 401, err('INVALID_SIGNATURE')],
    ['404 route', 404, 'not found'],
    ['429', 429, ''],
    ['400 unknown code', 400, err('WHATEVER')],
    ['no answer', 0, 'ECONNRESET'],
  ])('%s', (_name, status, body) => {
    for (const t of [seed, http])
      expect(classifyAnswer(t, bet, status, body)).toMatchObject({ class: 'failed', code: 'OPERATOR_ERROR' });
  });

  it('status-in-body: an unknown status, or RS_OK without the acknowledgement, fails', () => {
    expect(classifyAnswer(inBody, bet, 200, JSON.stringify({ status: 'RS_ERROR_UNKNOWN' })).class).toBe(
      'failed',
    );
    expect(classifyAnswer(inBody, bet, 200, JSON.stringify({ status: 'RS_OK' })).class).toBe('failed');
    expect(classifyAnswer(inBody, bet, 200, 'nope').class).toBe('failed');
  });
});

describe('per-operator tables', () => {
  it('an operator adds its own codes to a preset', () => {
    const t = answerTable({
      preset: 'http-status',
      refusals: { NO_CASH: 'INSUFFICIENT_FUNDS' },
      duplicates: ['DUP'],
    });
    expect(classifyAnswer(t, bet, 400, err('NO_CASH'))).toMatchObject({
      class: 'refused',
      code: 'INSUFFICIENT_FUNDS',
    });
    expect(classifyAnswer(t, bet, 409, err('DUP')).class).toBe('duplicate');
    expect(classifyAnswer(t, bet, 402, err('INSUFFICIENT_FUNDS')).class).toBe('refused');
  });

  it.each([
    ['nope', 'preset must be one of'],
    [{ preset: 'seed', refusals: { X: 'BROKE' } }, 'answer_table.refusals.X'],
    [{ preset: 'seed', duplicates: 'DUP' }, 'answer_table.duplicates'],
    [{ preset: 'seed', other: [] }, 'answer_table.other is not a known field'],
    [[1], 'must be a preset name or an object'],
  ])('refuses %j naming the field', (raw, message) => {
    expect(() => answerTable(raw)).toThrow(AnswerTableError);
    expect(() => answerTable(raw)).toThrow(message);
  });
});

describe('an answer holding U+0000', () => {
  // Postgres text refuses U+0000: a reason or acknowledgement carrying one would make the
  // CallbackFailed/CallbackSucceeded facts unstorable in the wallet read model.
  const nul = (v: unknown) => JSON.stringify(v).includes('\\u0000') || JSON.stringify(v).includes('\u0000');

  it('gives reasons and acknowledgements with U+FFFD in its place, raw or JSON-escaped', () => {
    const raw = classifyAnswer(seed, win, 500, 'down\u0000now');
    expect(raw).toEqual({
      class: 'failed',
      code: 'OPERATOR_ERROR',
      reason: 'HTTP 500 HTTP_500: down\uFFFDnow',
    });
    const escaped = classifyAnswer(
      seed,
      win,
      500,
      JSON.stringify({ error: { code: 'E', message: 'a\u0000b' } }),
    );
    expect(nul(escaped)).toBe(false);
    expect(escaped).toMatchObject({ class: 'failed', reason: expect.stringContaining('a\uFFFDb') });
    const ok = classifyAnswer(seed, bet, 200, JSON.stringify({ ...ack, operator_tx_id: 'o-\u0000' }));
    expect(ok).toEqual({
      class: 'ok',
      ack: { operatorTxId: 'o-\uFFFD', oldBalance: '10.00', newBalance: '22.50' },
    });
    for (const code of ['INSUFFICIENT_FUNDS', 'X\u0000'])
      expect(
        nul(classifyAnswer(http, bet, 402, JSON.stringify({ error: { code, message: 'm\u0000' } }))),
      ).toBe(false);
  });
});
