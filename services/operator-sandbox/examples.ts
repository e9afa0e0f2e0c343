/**
 * The operator guide's example exchanges (docs/operators.md "Example exchanges"),
 * made by the real code so that they cannot drift: every request is the saga's own
 * (rules/wallet/bodies.ts buildRequest), every answer the sandbox's (wire.ts reads the request and
 * writes the answer's fields, ledger.ts names the refusals, presets.ts gives each preset's status
 * and body). One session per form, the same ids and amounts in both, so the two forms differ only
 * where the forms do. scripts/operator-examples.ts writes the text into the guide between its
 * markers; examples.unit.test.ts fails when the guide differs from it.
 */
import { currencyTable } from '../../rules/money/currencies.ts';
import { DEFAULT_RETRY_SCHEDULE } from '../../rules/retry/schedule.ts';
import { ANSWER_PRESETS, type AnswerPreset, answerTable } from '../../rules/wallet/answers.ts';
import { buildRequest, type CallbackRequest, type OperatorConfig } from '../../rules/wallet/bodies.ts';
import type { BetContext } from '../../rules/wallet/events.ts';
import { errorOf } from './errors.ts';
import { betNotFound, insufficientFunds } from './ledger.ts';
import { errorAnswer, okAnswer, type SandboxAnswer } from './presets.ts';
import { FORM_A_PATHS } from './wallet-endpoints.ts';
import { balanceResponse, type Movement, movementResponse, parseMovement } from './wire.ts';

/** Where the generated text goes in docs/operators.md. */
export const BEGIN_MARKER =
  '<!-- operator-examples:begin (scripts/operator-examples.ts writes this part) -->';
export const END_MARKER = '<!-- operator-examples:end -->';

const CURRENCIES = currencyTable();
const USER = 'player-42';
const SESSION = { sessionToken: '3f2b9c1e8d4a7f60', extraData: null };
const START_MINOR = 100_000;
const FIRST_OPERATOR_TX = 132;
const WIDTH = 100;

/** One step of the session: a callback and what the sandbox does with it. */
interface Step {
  readonly title: string;
  readonly kind: 'balance' | 'bet' | 'win' | 'rollback' | 'close' | 'round-end';
  /** The bet's provider_tx_id (its win is + 1, its rollback + 2) and round. */
  readonly bet: number;
  readonly round: number;
  /** Minor units: the stake (bet, rollback), the payout (win). */
  readonly amountMinor: number;
  readonly free?: boolean;
  /** ok: booked; replay: the same callback again; refused: the ledger's refusal; none: no answer shown. */
  readonly outcome: 'ok' | 'replay' | 'refused' | 'none';
  /** A rollback of a booked bet refunds its stake; one of a bet never booked moves nothing. */
  readonly refunds?: boolean;
}

const STEPS: readonly Step[] = [
  { title: 'balance', kind: 'balance', bet: 0, round: 0, amountMinor: 0, outcome: 'ok' },
  { title: 'bet of 12.50: ok', kind: 'bet', bet: 4800, round: 1002003, amountMinor: 1250, outcome: 'ok' },
  {
    title: 'the same bet again (a retry): nothing moves',
    kind: 'bet',
    bet: 4800,
    round: 1002003,
    amountMinor: 1250,
    outcome: 'replay',
  },
  {
    title: 'bet of 5000.00: refused, insufficient funds',
    kind: 'bet',
    bet: 4804,
    round: 1002004,
    amountMinor: 500_000,
    outcome: 'refused',
  },
  {
    title: 'win of 30.00 on bet 4800',
    kind: 'win',
    bet: 4800,
    round: 1002003,
    amountMinor: 3000,
    outcome: 'ok',
  },
  { title: 'bet of 5.00', kind: 'bet', bet: 4808, round: 1002005, amountMinor: 500, outcome: 'ok' },
  {
    title: 'rollback of bet 4808: refunded',
    kind: 'rollback',
    bet: 4808,
    round: 1002005,
    amountMinor: 500,
    outcome: 'ok',
    refunds: true,
  },
  {
    title:
      'rollback of bet 4812, never booked (unknown transaction): nothing moves, the late bet will be refused',
    kind: 'rollback',
    bet: 4812,
    round: 1002006,
    amountMinor: 250,
    outcome: 'ok',
  },
  { title: 'bet of 2.00, lost', kind: 'bet', bet: 4816, round: 1002007, amountMinor: 200, outcome: 'ok' },
  {
    title: "round close of bet 4816 (round_close zero-win): the form's win for 0",
    kind: 'close',
    bet: 4816,
    round: 1002007,
    amountMinor: 0,
    outcome: 'ok',
  },
  {
    title: 'or, with round_close round-end: the round-end call instead (answered as a win)',
    kind: 'round-end',
    bet: 4816,
    round: 1002007,
    amountMinor: 0,
    outcome: 'none',
  },
  {
    title: 'free bet registration: a bet that moves no money',
    kind: 'bet',
    bet: 4820,
    round: 1002008,
    amountMinor: 0,
    free: true,
    outcome: 'ok',
  },
  {
    title: 'win of 8.00 on the free bet 4820',
    kind: 'win',
    bet: 4820,
    round: 1002008,
    amountMinor: 800,
    free: true,
    outcome: 'ok',
  },
  {
    title: 'win of a free bet never registered: refused by a strict operator (a lenient one credits it)',
    kind: 'win',
    bet: 4824,
    round: 1002009,
    amountMinor: 800,
    free: true,
    outcome: 'refused',
  },
];

function operator(form: 'A' | 'B', roundEnd: boolean): OperatorConfig {
  return {
    operatorId: 'opr_example',
    form,
    baseUrl: '',
    betPath: FORM_A_PATHS.bet,
    winPath: FORM_A_PATHS.win,
    rollbackPath: FORM_A_PATHS.rollback,
    signingSecret: '',
    timeoutMs: 10_000,
    retrySchedule: DEFAULT_RETRY_SCHEDULE,
    answers: answerTable('seed'),
    roundClose: roundEnd ? 'round-end' : 'zero-win',
    roundEndPath: roundEnd ? '/wallet/round-end' : null,
    amountFormat: 'string',
  };
}

/** The request of `step` in `form`, as the platform sends it. */
export function requestOf(form: 'A' | 'B', step: Step): CallbackRequest {
  if (step.kind === 'balance')
    return {
      method: 'POST',
      url: FORM_A_PATHS.balance,
      webhookId: 'balance-<unique per call>',
      body: { user_id: USER, currency: 'USD', session_token: SESSION.sessionToken },
    };
  const free = step.free === true;
  const bet: BetContext = {
    session_id: '00000000-0000-4000-8000-000000000042',
    operator_id: 'opr_example',
    user_id: USER,
    currency: 'USD',
    game: 'crash',
    round_id: step.round,
    amount_minor: step.amountMinor,
    mode: free ? 'free' : 'default',
    bonus_code: free ? 'FREE10' : null,
    free_bet_id: free ? '77' : null,
    count_register: 1,
    demo: false,
  };
  const kind = step.kind === 'round-end' ? 'close' : step.kind;
  const txId = step.bet + (kind === 'bet' ? 0 : kind === 'rollback' ? 2 : 1);
  const job = {
    kind,
    txId,
    betTxId: step.bet,
    amountMinor: free && kind !== 'win' ? 0 : step.amountMinor,
    bet,
  };
  return buildRequest(job, operator(form, step.kind === 'round-end'), SESSION, CURRENCIES);
}

/** Every step's request and, per preset, the sandbox's answer (null where none is shown). */
export function session(form: 'A' | 'B'): {
  step: Step;
  request: CallbackRequest;
  answers: Record<AnswerPreset, SandboxAnswer> | null;
}[] {
  let balance = START_MINOR;
  let nextTx = FIRST_OPERATOR_TX;
  const booked = new Map<number, { fields: Record<string, string>; stake: number }>();
  return STEPS.map((step) => {
    const request = requestOf(form, step);
    const each = (f: (p: AnswerPreset) => SandboxAnswer) =>
      Object.fromEntries(ANSWER_PRESETS.map((p) => [p, f(p)])) as Record<AnswerPreset, SandboxAnswer>;
    if (step.outcome === 'none') return { step, request, answers: null };
    if (step.kind === 'balance') {
      const fields = balanceResponse(
        { userId: USER, currency: 'USD', sessionToken: SESSION.sessionToken },
        balance,
        CURRENCIES,
      );
      return { step, request, answers: each((p) => okAnswer(p, fields, false)) };
    }
    const kind = step.kind === 'bet' ? 'bet' : step.kind === 'rollback' ? 'rollback' : 'win';
    const m: Movement = parseMovement(kind, form, request.body, CURRENCIES);
    if (step.outcome === 'replay') {
      const first = booked.get(step.bet)?.fields ?? {};
      return { step, request, answers: each((p) => okAnswer(p, first, true)) };
    }
    if (step.outcome === 'refused') {
      const e = errorOf(kind === 'bet' ? insufficientFunds(m, balance, CURRENCIES) : betNotFound(m));
      return { step, request, answers: each((p) => errorAnswer(p, e.code, e.message, e.status)) };
    }
    const delta =
      kind === 'bet' ? -m.amountMinor : kind === 'win' ? m.amountMinor : step.refunds ? step.amountMinor : 0;
    const fields = movementResponse(m, String(nextTx++), balance, balance + delta, CURRENCIES);
    balance += delta;
    if (kind === 'bet') booked.set(step.bet, { fields, stake: m.amountMinor });
    return { step, request, answers: each((p) => okAnswer(p, fields, false)) };
  });
}

/** `body` as one-line JSON fields packed into lines of at most WIDTH, continued with one space. */
function wrap(prefix: string, body: Record<string, unknown>): string {
  const fields = Object.entries(body).map(([k, v]) => `${JSON.stringify(k)}:${JSON.stringify(v)}`);
  const lines: string[] = [];
  let line = `${prefix}{`;
  fields.forEach((f, i) => {
    const piece = `${f}${i === fields.length - 1 ? '}' : ','}`;
    if (line.length + piece.length > WIDTH && !/[{ ]$/.test(line)) {
      lines.push(line);
      line = ' '.repeat(prefix.length + 1);
    }
    line += piece;
  });
  if (fields.length === 0) line += '}';
  lines.push(line);
  return lines.join('\n');
}

function requests(form: 'A' | 'B'): string {
  const blocks = session(form).map(({ step, request }, i) => {
    const head = `${request.method} ${request.url}`;
    return [
      `# ${i + 1}. ${step.title}`,
      `${head.padEnd(50)} webhook-id: ${request.webhookId}`,
      wrap('', request.body),
    ].join('\n');
  });
  return ['```http', blocks.join('\n\n'), '```'].join('\n');
}

function answers(preset: AnswerPreset): string {
  const a = session('A');
  const b = session('B');
  const blocks = a.flatMap(({ step, answers: byPreset }, i) => {
    if (byPreset === null) return [];
    const mine = byPreset[preset];
    const lines = [`# ${i + 1}. ${step.title}`, wrap(`${mine.status} `, mine.body)];
    // Form B's answer where it differs (Register Earnings echoes the request; refusals name the round).
    const other = b[i]?.answers?.[preset];
    if (other && JSON.stringify(other) !== JSON.stringify(mine))
      lines.push('# form B:', wrap(`${other.status} `, other.body));
    return [lines.join('\n')];
  });
  return ['```http', blocks.join('\n\n'), '```'].join('\n');
}

const PRESET_NOTES: Record<AnswerPreset, string> = {
  'http-status':
    "Refusals as 4xx statuses with `{error: {code, message}}`; the same callback again gets its first answer. The sandbox's default.",
  seed: 'Only the statuses docs/contract.md "Operator callbacks" lists: 200, 401 (signature), 404 (no route), 500 (failure). A refusal is an answer, not a failure: a 200 whose body names the code and carries no `operator_tx_id`.',
  'status-in-body':
    "HTTP 200 with a `status` (Hub88's `RS_*` where Hub88 has one); a refusal carries no `operator_tx_id`; the same callback again is `RS_ERROR_DUPLICATE_TRANSACTION` with its first answer. A bad signature is still HTTP 401. The sandbox's strict mode answers so.",
};

/** The generated part of docs/operators.md, markers included. */
export function renderExamples(): string {
  return [
    BEGIN_MARKER,
    '',
    '### Requests, form A',
    '',
    requests('A'),
    '',
    '### Requests, form B',
    '',
    'The same session on form B: wins and rollbacks are GET on the fixed paths, their ids strings, and',
    'neither Register Earnings nor Rollback Bet names the bet (find it by player, game and `round_id`).',
    '',
    requests('B'),
    '',
    ...ANSWER_PRESETS.flatMap((p) => [
      `### Answers, preset \`${p}\``,
      '',
      PRESET_NOTES[p],
      '',
      answers(p),
      '',
    ]),
    END_MARKER,
  ].join('\n');
}

/**
 * `doc` with the text between its markers replaced by renderExamples().
 * @throws Error when `doc` lacks either marker.
 */
export function spliceExamples(doc: string): string {
  const from = doc.indexOf(BEGIN_MARKER);
  const to = doc.indexOf(END_MARKER);
  if (from < 0 || to < from) throw new Error(`the guide has no ${BEGIN_MARKER} … ${END_MARKER}`);
  return `${doc.slice(0, from)}${renderExamples()}${doc.slice(to + END_MARKER.length)}`;
}
