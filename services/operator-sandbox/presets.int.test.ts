/**
 * The sandbox plays each answer preset (presets.ts), on both forms, against its
 * real ledger: every answer is read by the platform's own reading (answerOf, lib/http) under the
 * same preset. A success is `ok`; the same callback again is a `duplicate` (status-in-body) or its
 * first answer (`ok`, same operator_tx_id) and moves nothing; a refusal is `refused` and moves no
 * money; an id reused with another amount is a `mismatch`; a win of a bet never booked an
 * `unknown_transaction` (parked, never paid). The preset is switched through PUT /_sandbox/mode.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { answerOf } from '../../lib/http/callback-client.ts';
import { ANSWER_PRESETS, type AnswerPreset, answerTable } from '../../rules/wallet/answers.ts';
import type { CallbackKind } from '../../rules/wallet/bodies.ts';
import {
  type Reply,
  type SagaBet,
  sagaRequest,
  startTestSandbox,
  type TestSandbox,
} from '../../tests/support/sandbox.ts';

let sb: TestSandbox;
beforeAll(async () => {
  sb = await startTestSandbox({ SANDBOX_INITIAL_BALANCE: '100.00' });
});
afterAll(async () => {
  await sb?.close();
});

/** The route of a callback of `kind` in `form` (the sandbox's form-A paths, form B's fixed ones). */
function route(form: 'A' | 'B', kind: CallbackKind): { method: 'GET' | 'POST'; url: string } {
  if (kind === 'bet') return { method: 'POST', url: '/wallet/bet' };
  if (form === 'A') return { method: 'POST', url: kind === 'rollback' ? '/wallet/rollback' : '/wallet/win' };
  return {
    method: 'GET',
    url: kind === 'rollback' ? '/webhooks/platform/rollback' : '/webhooks/platform/rewards',
  };
}

/** Sends the saga's body for `kind` of `b` and reads the answer as the platform does under `preset`. */
async function exchange(preset: AnswerPreset, form: 'A' | 'B', kind: CallbackKind, b: SagaBet) {
  const body = sagaRequest(form, kind, b);
  const { method, url } = route(form, kind);
  const reply: Reply = await sb.call(method, url, body);
  const req = { method, url, webhookId: `${kind}-test`, body, kind };
  const answer = answerOf(
    { type: 'answer', status: reply.status, text: reply.body },
    answerTable(preset),
    req,
  );
  return { reply, answer };
}

let nextId = 1_000;
const bet = (user: string, amountMinor: number): SagaBet => {
  nextId += 4;
  return { betTxId: nextId, user, amountMinor, round: nextId };
};

describe.each(ANSWER_PRESETS)('preset %s', (preset) => {
  beforeAll(async () => {
    expect((await sb.put('/_sandbox/mode', { preset })).json).toEqual({ preset, strict: false });
  });

  describe.each(['A', 'B'] as const)('form %s', (form) => {
    const user = `${preset}-${form}`;

    it('a bet is ok; the same bet again moves nothing and is a duplicate or its first answer', async () => {
      const b = bet(user, 1_000);
      const first = await exchange(preset, form, 'bet', b);
      expect(first.answer.class).toBe('ok');
      const again = await exchange(preset, form, 'bet', b);
      expect(again.answer.class).toBe(preset === 'status-in-body' ? 'duplicate' : 'ok');
      if ('ack' in first.answer && 'ack' in again.answer)
        expect(again.answer.ack.operatorTxId).toBe(first.answer.ack.operatorTxId);
      expect(await sb.balance(user)).toBe(9_000);
    });

    it('a bet above the balance is refused (insufficient funds) and moves no money', async () => {
      const before = await sb.txCount();
      const { reply, answer } = await exchange(preset, form, 'bet', bet(user, 50_000));
      expect(answer).toMatchObject({ class: 'refused', code: 'INSUFFICIENT_FUNDS' });
      expect(reply.json).not.toHaveProperty('operator_tx_id');
      if (preset === 'seed') expect(reply.status).toBe(200);
      expect(await sb.balance(user)).toBe(9_000);
      expect(await sb.txCount()).toBe(before);
    });

    it('a win is ok and credits; a rollback is ok and refunds', async () => {
      const won = bet(user, 500);
      await exchange(preset, form, 'bet', won);
      const win = await exchange(preset, form, 'win', { ...won, amountMinor: 1_500 });
      expect(win.answer.class).toBe('ok');
      const lost = bet(user, 700);
      await exchange(preset, form, 'bet', lost);
      expect((await exchange(preset, form, 'rollback', lost)).answer.class).toBe('ok');
      expect(await sb.balance(user)).toBe(10_000);
    });

    it('a rollback of a bet never booked is ok and moves nothing; the late bet is refused', async () => {
      const never = bet(user, 300);
      expect((await exchange(preset, form, 'rollback', never)).answer.class).toBe('ok');
      const late = await exchange(preset, form, 'bet', never);
      expect(late.answer).toMatchObject({ class: 'refused', code: 'BET_ROLLED_BACK' });
      expect(await sb.balance(user)).toBe(10_000);
    });

    it('an id reused with another amount is a mismatch; a win of a bet never booked an unknown transaction', async () => {
      const b = bet(user, 100);
      await exchange(preset, form, 'bet', b);
      expect((await exchange(preset, form, 'bet', { ...b, amountMinor: 200 })).answer.class).toBe('mismatch');
      const ghost = bet(user, 100);
      expect((await exchange(preset, form, 'win', ghost)).answer.class).toBe('unknown_transaction');
      expect(await sb.balance(user)).toBe(9_900);
    });
  });
});

describe('PUT /_sandbox/mode', () => {
  const put = async (body: unknown) => sb.put('/_sandbox/mode', body);

  it('strict alone takes status-in-body; DELETE goes back to the configured mode; unknown input is 400', async () => {
    expect((await put({ strict: true })).json).toEqual({ preset: 'status-in-body', strict: true });
    expect((await put({ preset: 'seed' })).json).toEqual({ preset: 'seed', strict: true });
    expect((await sb.app.inject({ method: 'DELETE', url: '/_sandbox/mode' })).json()).toEqual({
      preset: 'http-status',
      strict: false,
    });
    expect((await put({ preset: 'lenient' })).status).toBe(400);
    expect((await put({ strict: true, extra: 1 })).status).toBe(400);
    expect((await sb.app.inject({ method: 'GET', url: '/_sandbox/mode' })).json()).toEqual({
      preset: 'http-status',
      strict: false,
    });
  });
});
