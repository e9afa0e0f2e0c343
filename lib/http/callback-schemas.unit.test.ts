/**
 * Every body the wallet saga sends (rules/wallet/bodies.ts buildRequest) against its JSON Schema
 * (schemas/callbacks): both forms, every callback kind (bet, win, rollback, and a
 * lost bet's round close as a zero-amount win or a round-end call), real-money and free bets,
 * amounts as strings and as numbers, in currencies of exponent 0 (JPY), 2 (USD) and 8 (BTC). The
 * schemas themselves refuse what a strict operator refuses: an unknown field, a missing one, an id
 * of the other form's type, a free bet that moves money.
 */
import { describe, expect, it } from 'vitest';
import type { AmountFormat } from '../../rules/money/currencies.ts';
import { DEFAULT_RETRY_SCHEDULE } from '../../rules/retry/schedule.ts';
import { answerTable } from '../../rules/wallet/answers.ts';
import {
  buildRequest,
  type CallbackKind,
  type OperatorConfig,
  type RoundClose,
} from '../../rules/wallet/bodies.ts';
import type { BetContext } from '../../rules/wallet/events.ts';
import { callbackSchemas, requestSchemaOf, responseSchemaOf, type SchemaAction } from './callback-schemas.ts';

const schemas = callbackSchemas();

const operator = (form: 'A' | 'B', amountFormat: AmountFormat, roundClose: RoundClose): OperatorConfig => ({
  operatorId: 'opr_schema',
  form,
  baseUrl: 'http://wallet.test',
  betPath: '/wallet/bet',
  winPath: '/wallet/win',
  rollbackPath: '/wallet/rollback',
  signingSecret: '',
  timeoutMs: 1_000,
  retrySchedule: DEFAULT_RETRY_SCHEDULE,
  answers: answerTable('seed'),
  roundClose,
  roundEndPath: roundClose === 'round-end' ? '/wallet/round-end' : null,
  amountFormat,
});

/** A stake of 12.5 units (125 BTC satoshi-scaled alike): 1250 minor units at any exponent ≥ 2. */
const STAKE: Record<string, number> = { JPY: 1250, USD: 1250, BTC: 125_000_000 };

/** A bet as the API appends it: a free bet carries its grant's value as its stake (services/api). */
function betOf(currency: string, free: boolean): BetContext {
  return {
    session_id: '00000000-0000-4000-8000-000000000017',
    operator_id: 'opr_schema',
    user_id: 'player-17',
    currency,
    game: 'crash',
    round_id: 1_000_000_000_042,
    amount_minor: STAKE[currency] as number,
    mode: free ? 'free' : 'default',
    bonus_code: free ? 'WELCOME10' : null,
    free_bet_id: free ? '9001' : null,
    count_register: 1,
    demo: false,
  } as BetContext;
}

/** The body buildRequest makes for `kind` of that bet, with the amount the process manager passes. */
function bodyOf(
  kind: CallbackKind,
  form: 'A' | 'B',
  format: AmountFormat,
  currency: string,
  free: boolean,
  roundClose: RoundClose = 'zero-win',
) {
  const bet = betOf(currency, free);
  // rules/wallet/process.ts: a bet and its rollback carry the stake (0 for a free bet, which moves
  // no money), a win its payout, a close 0.
  const stake = free ? 0 : bet.amount_minor;
  const amountMinor = kind === 'win' ? 2 * bet.amount_minor : kind === 'close' ? 0 : stake;
  const txId = { bet: 4800, win: 4801, close: 4801, rollback: 4802 }[kind];
  const job = { kind, txId, betTxId: 4800, amountMinor, bet };
  return buildRequest(job, operator(form, format, roundClose), { sessionToken: 'st_17', extraData: null });
}

const FORMS = ['A', 'B'] as const;
const FORMATS = ['string', 'number'] as const;
const CURRENCIES = ['JPY', 'USD', 'BTC'] as const;
const cases = FORMS.flatMap((form) =>
  FORMATS.flatMap((format) => CURRENCIES.map((currency) => ({ form, format, currency }))),
);

function check(form: 'A' | 'B', body: Record<string, unknown>): string[] {
  return schemas.request(requestSchemaOf(body.action as SchemaAction, form), body);
}

describe('every callback body the saga sends conforms to its schema', () => {
  describe.each(cases)('form $form, amounts as $format, $currency', ({ form, format, currency }) => {
    it.each(['bet', 'win', 'rollback'] as const)('real money: %s', (kind) => {
      expect(check(form, bodyOf(kind, form, format, currency, false).body)).toEqual([]);
    });

    it('real money: a lost bet closed with a zero-amount win, and with a round-end call', () => {
      const zeroWin = bodyOf('close', form, format, currency, false).body;
      expect(zeroWin.action).toBe('win');
      expect(check(form, zeroWin)).toEqual([]);
      const roundEnd = bodyOf('close', form, format, currency, false, 'round-end').body;
      expect(roundEnd.action).toBe('round_end');
      expect(check(form, roundEnd)).toEqual([]);
    });

    // a free bet is registered with the bet callback (mode free, amount 0,
    // bonus_code, free_bet_id) and its win, rollback and round close refer to it.
    it.each(['bet', 'win', 'rollback', 'close'] as const)('free bet: %s', (kind) => {
      const { body } = bodyOf(kind, form, format, currency, true);
      expect(body.mode).toBe('free');
      expect(check(form, body)).toEqual([]);
    });

    it('free bet registration: amount 0 in the currency precision, with bonus_code and free_bet_id', () => {
      const { body } = bodyOf('bet', form, format, currency, true);
      expect(body).toMatchObject({ action: 'bet', bonus_code: 'WELCOME10', free_bet_id: '9001' });
      expect(Number(body.amount)).toBe(0);
    });
  });

  it('form B rollback carries no linked_tx_id (docs/contract.md "Implemented by the operator")', () => {
    const { body } = bodyOf('rollback', 'B', 'string', 'USD', false);
    expect(body).not.toHaveProperty('linked_tx_id');
  });
});

const bet = () => ({ ...bodyOf('bet', 'A', 'string', 'USD', false).body });

describe('the schemas refuse what a strict operator refuses', () => {
  it('an unknown field, named', () => {
    expect(schemas.request('bet', { ...bet(), linked_tx_id: 1 })).toContain(
      'body has the unknown field linked_tx_id',
    );
  });

  it('a missing field', () => {
    const { session_token: _, ...rest } = bet();
    expect(schemas.request('bet', rest).join('; ')).toMatch(/session_token/);
  });

  it('ids of the other form: a string id in form A, an integer id in form B', () => {
    const win = bodyOf('win', 'A', 'string', 'USD', false).body;
    expect(schemas.request('win-a', { ...win, provider_tx_id: '4801' })).not.toEqual([]);
    const rewards = bodyOf('win', 'B', 'string', 'USD', false).body;
    expect(schemas.request('rewards-b', { ...rewards, provider_tx_id: 4801 })).not.toEqual([]);
  });

  it('a real-money bet of 0, a free bet of more than 0, a free bet without its free_bet_id', () => {
    expect(schemas.request('bet', { ...bet(), amount: '0.00' })).not.toEqual([]);
    const free = { ...bet(), mode: 'free', free_bet_id: '9001' };
    expect(schemas.request('bet', { ...free, amount: '0.00' })).toEqual([]);
    expect(schemas.request('bet', { ...free, amount: 0 })).toEqual([]);
    expect(schemas.request('bet', { ...free, amount: '12.50' })).not.toEqual([]);
    expect(schemas.request('bet', { ...free, amount: '0.00', free_bet_id: undefined })).not.toEqual([]);
  });

  it('amounts that are neither a decimal string nor a non-negative number', () => {
    for (const amount of ['12,50', '-1.00', '1e3', '.5', null, -1])
      expect(schemas.request('bet', { ...bet(), amount }), String(amount)).not.toEqual([]);
  });

  it('form B rollback with linked_tx_id', () => {
    const body = { ...bodyOf('rollback', 'B', 'string', 'USD', false).body, linked_tx_id: '4800' };
    expect(schemas.request('rollback-b', body)).toContain('body has the unknown field linked_tx_id');
  });

  it('balance: exactly user_id, currency and session_token', () => {
    const body = { user_id: 'player-17', currency: 'USD', session_token: 'st_17' };
    expect(schemas.request('balance', body)).toEqual([]);
    expect(schemas.request('balance', { ...body, amount: '1.00' })).not.toEqual([]);
  });
});

describe('ok answer schemas', () => {
  const ack = { operator_tx_id: '132', new_balance: '987.50', old_balance: '1000.00' };
  const echo = { ...ack, user_id: 'player-17', currency: 'USD', provider: 'casino-platform' };

  it('the seed fields, all strings, and status (the status-in-body preset) beside them', () => {
    expect(schemas.response(responseSchemaOf('bet', 'A'), ack)).toEqual([]);
    expect(schemas.response(responseSchemaOf('win', 'A'), { ...ack, status: 'RS_OK' })).toEqual([]);
    expect(schemas.response(responseSchemaOf('round_end', 'B'), ack)).toEqual([]);
    expect(schemas.response(responseSchemaOf('win', 'B'), { ...echo, provider_tx_id: '4801' })).toEqual([]);
    expect(schemas.response(responseSchemaOf('rollback', 'A'), { ...echo, provider_tx_id: '4802' })).toEqual(
      [],
    );
    const balance = { user_id: 'p', currency: 'USD', balance: '10.00', platform_session_token: 't' };
    expect(schemas.response('balance', balance)).toEqual([]);
  });

  it('refuses a number balance, a missing echo and a field the seed does not list', () => {
    expect(schemas.response('bet', { ...ack, new_balance: 987.5 })).not.toEqual([]);
    expect(schemas.response('rewards-b', ack).join('; ')).toMatch(/provider_tx_id/);
    expect(schemas.response('win-a', { ...ack, bonus: '1' })).toContain('body has the unknown field bonus');
  });
});
