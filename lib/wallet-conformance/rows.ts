/**
 * The rows of the wallet conformance kit (docs/operators.md "Conformance kit"):
 * each row drives the operator's wallet through one rule of docs/architecture.md "Money rules" with fresh
 * transaction ids, reads the player's balance through the balance callback before and after, and
 * says pass or fail and why. Rows are independent of each other: a row never relies on what an
 * earlier row left behind but the player's account.
 *
 * "A definite no" below is an answer that refuses and can be read as such: a refusal, an unknown
 * transaction or a mismatch under the operator's answer table, or any other 4xx. A 5xx, a timeout
 * or a success is not: the platform would retry the first two and book the third.
 */

import type { Answer } from '../../rules/wallet/answers.ts';
import type { Driver, MoneyCall, MoneyResult } from './driver.ts';
import { ConformanceError } from './errors.ts';
import type { TestPlayer } from './target.ts';

export const ROW_IDS = [
  'balance',
  'bet',
  'bet-replay',
  'bet-other-amount',
  'rollback-before-bet',
  'rollback-unknown',
  'win-after-rollback',
  'rollback-after-win',
  'bet-over-balance',
  'signature',
  'timeout',
] as const;
export type RowId = (typeof ROW_IDS)[number];

/** The ids of one fresh bet: its provider_tx_id, its win's (+1) and rollback's (+2), its round. */
export interface BetIds {
  readonly bet: number;
  readonly win: number;
  readonly rollback: number;
  readonly round: number;
}

export interface RowContext {
  readonly driver: Driver;
  readonly player: TestPlayer;
  /** A bet id never used before in this run. */
  nextBet(): BetIds;
  /** One major unit of the player's currency, in minor units: the kit's stake. */
  readonly stakeMinor: number;
  /** The operator's callback timeout, ms (the timeout row sends with it). */
  readonly timeoutMs: number;
  /** Minor units as the currency's decimal text. */
  format(minor: number): string;
  /** A balance of the player's currency (decimal string or number) in minor units, or undefined. */
  toMinor(value: unknown): number | undefined;
}

export interface Verdict {
  readonly pass: boolean;
  readonly detail: string;
}

export interface RowDef {
  readonly id: RowId;
  readonly title: string;
  /** What passes, in one sentence (the report and docs/operators.md). */
  readonly rule: string;
  run(ctx: RowContext): Promise<Verdict>;
}

/** A balance could not be read: the row cannot judge money and fails. */
export class RowAbort extends ConformanceError {
  declare readonly code: 'BALANCE_UNREADABLE';

  constructor(message: string) {
    super('BALANCE_UNREADABLE', message);
  }
}

/** Collects a row's findings: what went wrong, and what was seen. */
class Findings {
  private readonly problems: string[] = [];
  private readonly seen: string[] = [];

  need(ok: boolean, problem: string): boolean {
    if (!ok) this.problems.push(problem);
    return ok;
  }

  note(text: string): void {
    this.seen.push(text);
  }

  verdict(): Verdict {
    const pass = this.problems.length === 0;
    return { pass, detail: [...this.problems, ...this.seen].join('; ') };
  }
}

async function balanceOf(ctx: RowContext, step: string): Promise<number> {
  const b = await ctx.driver.balance(step);
  if (b.minor === null) throw new RowAbort(`${step}: the balance callback gave no balance (${b.problem})`);
  return b.minor;
}

type Call = Omit<MoneyCall, 'kind' | 'betTxId' | 'txId' | 'roundId' | 'amountMinor'>;

/** Sends the `kind` callback of bet `ids` (its own tx id: the bet's, +1 or +2). */
function send(
  ctx: RowContext,
  kind: 'bet' | 'win' | 'rollback',
  step: string,
  ids: BetIds,
  amountMinor: number,
  o: Call = {},
) {
  const txId = kind === 'bet' ? ids.bet : kind === 'win' ? ids.win : ids.rollback;
  return ctx.driver.money(step, { kind, betTxId: ids.bet, txId, roundId: ids.round, amountMinor, ...o });
}

/** `ok (HTTP 200)`, `refused INSUFFICIENT_FUNDS (HTTP 402)`, `failed BET_SETTLED (HTTP 409)`, `failed TIMEOUT`. */
export function describe(r: MoneyResult): string {
  const code = r.record.code === null ? '' : ` ${r.record.code}`;
  return `${r.answer.class}${code}${r.status === null ? '' : ` (HTTP ${r.status})`}`;
}

const isAck = (a: Answer) => a.class === 'ok' || a.class === 'duplicate';

/** A refusal the platform can read as one (module comment). */
function definiteNo(r: MoneyResult): boolean {
  const c = r.answer.class;
  if (c === 'refused' || c === 'unknown_transaction' || c === 'mismatch') return true;
  return c === 'failed' && r.status !== null && r.status >= 400 && r.status < 500;
}

/** The money an answer says moved (new − old balance), when it gives both balances. */
function answeredDelta(r: MoneyResult, ctx: RowContext): number | null {
  if (!('ack' in r.answer)) return null;
  const { oldBalance, newBalance } = r.answer.ack;
  if (oldBalance === null || newBalance === null) return null;
  const after = ctx.toMinor(newBalance);
  const before = ctx.toMinor(oldBalance);
  return after === undefined || before === undefined ? null : after - before;
}

/** Needs `r` to be one of `expected` (a description, or the classes that pass); notes it when it is. */
function answered(f: Findings, what: string, r: MoneyResult, pass: boolean, expected: string): boolean {
  const ok = f.need(pass, `the ${what} was answered ${describe(r)}, expected ${expected}`);
  if (ok) f.note(`${what} answered ${describe(r)}`);
  return ok;
}

const expectOk = (f: Findings, what: string, r: MoneyResult) =>
  f.need(r.answer.class === 'ok', `the ${what} was answered ${describe(r)}, expected ok`);

/**
 * Runs `act` between two reads of the balance and needs the balance to have moved by exactly
 * `expected` minor units over it.
 */
async function moves(
  ctx: RowContext,
  f: Findings,
  what: string,
  expected: number,
  act: () => Promise<unknown>,
) {
  const before = await balanceOf(ctx, `balance before the ${what}`);
  await act();
  const after = await balanceOf(ctx, `balance after the ${what}`);
  const d = after - before;
  if (
    f.need(d === expected, `${what}: the balance moved by ${ctx.format(d)}, expected ${ctx.format(expected)}`)
  )
    f.note(`balance ${ctx.format(before)} → ${ctx.format(after)}`);
}

/** Rolls back bet `ids`, never sent: the answer must say complete (ok or unknown transaction). */
async function rollbackUnknown(ctx: RowContext, f: Findings, ids: BetIds): Promise<void> {
  const rb = await send(ctx, 'rollback', 'rollback', ids, ctx.stakeMinor);
  const c = rb.answer.class;
  answered(f, 'rollback', rb, c === 'ok' || c === 'unknown_transaction', 'ok or unknown transaction');
}

/** A row's run from its checks on a fresh bet. */
const judge =
  (check: (ctx: RowContext, f: Findings, ids: BetIds) => Promise<void>) =>
  async (ctx: RowContext): Promise<Verdict> => {
    const f = new Findings();
    await check(ctx, f, ctx.nextBet());
    return f.verdict();
  };

/** The rows, in the order the kit runs them. */
export const ROWS: readonly RowDef[] = [
  {
    id: 'balance',
    title: 'balance',
    rule: 'the balance callback answers the player, currency, balance (decimal string) and platform_session_token',
    run: judge(async (ctx, f) => {
      const b = await ctx.driver.balance('balance');
      f.need(b.problem === null, `no balance: ${b.problem}`);
      if (b.body) {
        f.need(b.body.user_id === ctx.player.userId, 'user_id is not the player');
        f.need(b.body.currency === ctx.player.currency, 'currency is not the player’s');
        f.need(typeof b.body.balance === 'string', 'balance is not a decimal string');
        f.need(typeof b.body.platform_session_token === 'string', 'platform_session_token is missing');
      }
      if (b.minor !== null) f.note(`balance ${ctx.format(b.minor)} ${ctx.player.currency}`);
    }),
  },
  {
    id: 'bet',
    title: 'bet',
    rule: 'a bet is acknowledged (operator_tx_id, balances) and debits exactly its amount',
    run: judge((ctx, f, ids) =>
      moves(ctx, f, 'bet', -ctx.stakeMinor, async () => {
        const r = await send(ctx, 'bet', 'bet', ids, ctx.stakeMinor);
        expectOk(f, 'bet', r);
        const said = answeredDelta(r, ctx);
        f.need(
          said === null || said === -ctx.stakeMinor,
          `the answer's old and new balances differ by ${ctx.format(said ?? 0)}`,
        );
      }),
    ),
  },
  {
    id: 'bet-replay',
    title: 'same bet again',
    rule: 'the same bet (same id and body) sent again is answered with the first answer or a duplicate, and debited once',
    run: judge((ctx, f, ids) =>
      moves(ctx, f, 'bet and its replay', -ctx.stakeMinor, async () => {
        const first = await send(ctx, 'bet', 'bet', ids, ctx.stakeMinor);
        expectOk(f, 'bet', first);
        const again = await send(ctx, 'bet', 'same bet again', ids, ctx.stakeMinor);
        const c = again.answer.class;
        answered(f, 'replay', again, c === 'ok' || c === 'duplicate', 'ok or duplicate');
        if ('ack' in again.answer && 'ack' in first.answer && c === 'ok')
          f.need(
            again.answer.ack.operatorTxId === first.answer.ack.operatorTxId,
            `the replay names another operator_tx_id (${again.answer.ack.operatorTxId}, first ${first.answer.ack.operatorTxId})`,
          );
      }),
    ),
  },
  {
    id: 'bet-other-amount',
    title: 'same tx id, other amount',
    rule: 'a bet id reused with another amount is refused or answered as a mismatch (idempotency conflict), and debits nothing more',
    run: judge((ctx, f, ids) =>
      moves(ctx, f, 'bet and its reuse', -ctx.stakeMinor, async () => {
        expectOk(f, 'bet', await send(ctx, 'bet', 'bet', ids, ctx.stakeMinor));
        const other = await send(ctx, 'bet', 'same id, double amount', ids, 2 * ctx.stakeMinor);
        const c = other.answer.class;
        answered(f, 'reuse', other, c === 'refused' || c === 'mismatch', 'a refusal or a mismatch');
      }),
    ),
  },
  {
    id: 'rollback-before-bet',
    title: 'rollback before bet',
    rule: 'a rollback of a bet not received yet is complete (ok or unknown transaction); the late bet is then refused or moves no money',
    run: judge(async (ctx, f, ids) => {
      await rollbackUnknown(ctx, f, ids);
      // Whether that rollback itself moved money is the rollback-unknown row's check.
      await moves(ctx, f, 'late bet', 0, async () => {
        f.note(`late bet answered ${describe(await send(ctx, 'bet', 'late bet', ids, ctx.stakeMinor))}`);
      });
    }),
  },
  {
    id: 'rollback-unknown',
    title: 'rollback of an unknown tx',
    rule: 'a rollback of a bet the operator never booked is complete (ok or unknown transaction) and moves no money',
    run: judge((ctx, f, ids) => moves(ctx, f, 'rollback', 0, () => rollbackUnknown(ctx, f, ids))),
  },
  {
    id: 'win-after-rollback',
    title: 'win after rollback',
    rule: 'a win of a rolled-back bet gets a definite no and credits nothing',
    run: judge(async (ctx, f, ids) => {
      await moves(ctx, f, 'bet and its rollback', 0, async () => {
        expectOk(f, 'bet', await send(ctx, 'bet', 'bet', ids, ctx.stakeMinor));
        const rb = await send(ctx, 'rollback', 'rollback', ids, ctx.stakeMinor);
        f.need(isAck(rb.answer), `the rollback was answered ${describe(rb)}, expected ok`);
      });
      await moves(ctx, f, 'win', 0, async () => {
        const w = await send(ctx, 'win', 'win', ids, 2 * ctx.stakeMinor);
        answered(f, 'win', w, definiteNo(w), 'a definite no');
      });
    }),
  },
  {
    id: 'rollback-after-win',
    title: 'rollback after win',
    rule: 'a rollback of a bet that was won gets a definite no and refunds nothing: the bet is settled',
    run: judge(async (ctx, f, ids) => {
      expectOk(f, 'bet', await send(ctx, 'bet', 'bet', ids, ctx.stakeMinor));
      expectOk(f, 'win', await send(ctx, 'win', 'win', ids, 2 * ctx.stakeMinor));
      await moves(ctx, f, 'rollback', 0, async () => {
        const rb = await send(ctx, 'rollback', 'rollback', ids, ctx.stakeMinor);
        answered(f, 'rollback', rb, definiteNo(rb), 'a definite no');
      });
    }),
  },
  {
    id: 'bet-over-balance',
    title: 'bet over the balance',
    rule: 'a bet above the balance is refused (insufficient funds or another refusal) and moves no money',
    run: judge(async (ctx, f, ids) => {
      const amount = Math.max(await balanceOf(ctx, 'balance'), 0) + ctx.stakeMinor;
      let r: MoneyResult | undefined;
      await moves(ctx, f, 'bet', 0, async () => {
        r = await send(ctx, 'bet', `bet of ${ctx.format(amount)}`, ids, amount);
        answered(f, 'bet', r, r.answer.class === 'refused', 'a refusal');
      });
      // Give back what a wrongly accepted bet took, so the player can go on (not judged).
      if (r && isAck(r.answer)) await send(ctx, 'rollback', 'clean-up rollback (not judged)', ids, amount);
    }),
  },
  {
    id: 'signature',
    title: 'signature verification',
    rule: 'a bet signed with another secret, one not signed, and one signed 10 min ago are each refused with 401 and move no money',
    run: judge((ctx, f) =>
      moves(ctx, f, 'badly signed bets', 0, async () => {
        let all = true;
        for (const signing of ['wrong-secret', 'unsigned', 'stale'] as const) {
          const r = await send(ctx, 'bet', `bet, ${signing}`, ctx.nextBet(), ctx.stakeMinor, { signing });
          all =
            f.need(r.status === 401, `the ${signing} bet was answered ${describe(r)}, expected HTTP 401`) &&
            all;
        }
        if (all) f.note('401 to each');
      }),
    ),
  },
  {
    id: 'timeout',
    title: 'answer within the timeout',
    rule: "balance, bet and win sent with the operator's own timeout are each answered (ok) within it",
    run: judge(async (ctx, f, ids) => {
      const timeoutMs = ctx.timeoutMs;
      const b = await ctx.driver.balance('balance', timeoutMs);
      f.need(b.problem === null, `balance: ${b.problem}`);
      const times = [`balance ${b.record.ms} ms`];
      for (const kind of ['bet', 'win'] as const) {
        const r = await send(ctx, kind, kind, ids, ctx.stakeMinor, { timeoutMs });
        times.push(`${kind} ${r.record.ms} ms`);
        expectOk(f, kind, r);
      }
      f.note(`timeout ${timeoutMs} ms: ${times.join(', ')}`);
    }),
  },
];
