/**
 * The sandbox's answers per preset (presets.ts) read back by the platform's answer table of the same
 * preset (rules/wallet/answers.ts): every refusal the ledger makes is a refusal (or a mismatch, or
 * an unknown transaction) and never a failure that would start a rollback; the seed preset uses only
 * the statuses docs/contract.md "Operator callbacks" lists. Money is checked against the real ledger in presets.int.test.ts.
 */
import { describe, expect, it } from 'vitest';
import {
  ANSWER_PRESETS,
  type AnswerClass,
  type AnsweredRequest,
  answerTable,
  classifyAnswer,
} from '../../rules/wallet/answers.ts';
import { type SandboxCode, STATUS_OF } from './errors.ts';
import { errorAnswer, okAnswer } from './presets.ts';

const bet: AnsweredRequest = { kind: 'bet', echoes: false, body: { amount: '1.00' } };
const win: AnsweredRequest = { kind: 'win', echoes: false, body: { amount: '2.00' } };
const ack = { operator_tx_id: '7', new_balance: '9.00', old_balance: '10.00' };

/** How the platform must read each of the sandbox's codes on a bet (a win for BET_NOT_FOUND). */
const EXPECTED: Record<SandboxCode, { req: AnsweredRequest; class: AnswerClass }> = {
  BAD_REQUEST: { req: bet, class: 'failed' },
  INVALID_SIGNATURE: { req: bet, class: 'failed' },
  INSUFFICIENT_FUNDS: { req: bet, class: 'refused' },
  NOT_FOUND: { req: bet, class: 'failed' },
  IDEMPOTENCY_CONFLICT: { req: bet, class: 'mismatch' },
  BET_ROLLED_BACK: { req: bet, class: 'refused' },
  BET_NOT_FOUND: { req: win, class: 'unknown_transaction' },
  BET_SETTLED: { req: bet, class: 'refused' },
};

describe.each(ANSWER_PRESETS)('the sandbox answering as a %s operator', (preset) => {
  const table = answerTable(preset);
  const read = (req: AnsweredRequest, a: { status: number; body: unknown }) =>
    classifyAnswer(table, req, a.status, JSON.stringify(a.body));

  it('a success is ok; the same callback again is the first answer (ok) or a duplicate', () => {
    expect(read(bet, okAnswer(preset, ack, false))).toMatchObject({
      class: 'ok',
      ack: { operatorTxId: '7' },
    });
    const again = read(bet, okAnswer(preset, ack, true));
    expect(again).toMatchObject({
      class: preset === 'status-in-body' ? 'duplicate' : 'ok',
      ack: { operatorTxId: '7' },
    });
  });

  it.each(Object.keys(STATUS_OF) as SandboxCode[])('%s is read as the platform must read it', (code) => {
    const a = errorAnswer(preset, code, 'why', STATUS_OF[code]);
    const { req, class: expected } = EXPECTED[code];
    expect(read(req, a).class).toBe(expected);
    if (preset === 'seed') expect([200, 401, 404, 500]).toContain(a.status);
    if (a.status === 200) expect(a.body).not.toHaveProperty('operator_tx_id');
  });

  it('a refusal of insufficient funds is the INSUFFICIENT_FUNDS refusal', () => {
    const a = errorAnswer(preset, 'INSUFFICIENT_FUNDS', 'balance 1.00 is below the bet 5.00', 402);
    expect(read(bet, a)).toMatchObject({ class: 'refused', code: 'INSUFFICIENT_FUNDS' });
  });

  it('failures of the sandbox itself stay HTTP failures: 500, and 503 outside the seed', () => {
    expect(errorAnswer(preset, 'INJECTED_FAULT', 'x', 500).status).toBe(500);
    expect(errorAnswer(preset, 'UNAVAILABLE', 'x', 503).status).toBe(preset === 'seed' ? 500 : 503);
    expect(read(bet, errorAnswer(preset, 'INTERNAL', 'x', 500)).class).toBe('failed');
  });
});

describe('the bodies of each preset', () => {
  it('http-status and seed: {error: {code, message}}; status-in-body: {status, message}', () => {
    expect(errorAnswer('http-status', 'INSUFFICIENT_FUNDS', 'm', 402)).toEqual({
      status: 402,
      body: { error: { code: 'INSUFFICIENT_FUNDS', message: 'm' } },
    });
    expect(errorAnswer('seed', 'INSUFFICIENT_FUNDS', 'm', 402)).toEqual({
      status: 200,
      body: { error: { code: 'INSUFFICIENT_FUNDS', message: 'm' } },
    });
    expect(errorAnswer('status-in-body', 'INSUFFICIENT_FUNDS', 'm', 402)).toEqual({
      status: 200,
      body: { status: 'RS_ERROR_NOT_ENOUGH_MONEY', message: 'm' },
    });
    expect(errorAnswer('status-in-body', 'INVALID_SIGNATURE', 'm', 401)).toEqual({
      status: 401,
      body: { status: 'RS_ERROR_INVALID_SIGNATURE', message: 'm' },
    });
    expect(okAnswer('status-in-body', ack, false).body).toEqual({ status: 'RS_OK', ...ack });
  });
});
