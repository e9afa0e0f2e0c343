/**
 * Runs the conformance rows (rows.ts) against one operator for one test player, one after the
 * other, and gathers each row's verdict with every request and answer it made.
 *
 * Transaction ids: a run takes a random bet id from 2^52 up (a multiple of 4, as the platform's
 * bet ids are; a win is +1, a rollback +2), far above the platform's own ids, which count up from
 * small numbers; each bet of the run takes the next multiple of 4. Every bet is on a round of its
 * own (round_id = its bet id).
 *
 * Timeouts: the timeout row sends with the operator's own timeout; every other row allows the
 * operator's timeout plus RULE_SLACK_MS, so that a slow wallet fails the timeout row only and the
 * other rows still judge its money.
 *
 * Schemas: every ok answer is checked against its schema (schemas/callbacks/*.response.json: the
 * seed's fields, all strings); a row with an answer that does not match fails and says which.
 */
import { randomInt } from 'node:crypto';
import type { Currencies } from '../../rules/money/currencies.ts';
import type { CallbackClient } from '../http/callback-client.ts';
import { callbackSchemas } from '../http/callback-schemas.ts';
import { balanceMinor, Driver, type Recorded } from './driver.ts';
import { type BetIds, ROWS, RowAbort, type RowContext, type RowId } from './rows.ts';
import type { Target } from './target.ts';

/** What the rule rows allow on top of the operator's timeout, ms. */
export const RULE_SLACK_MS = 10_000;

/** Lowest bet id of a run: 2^52. */
const ID_FLOOR = 2 ** 52;

export interface RowResult {
  readonly id: RowId;
  readonly title: string;
  readonly rule: string;
  readonly pass: boolean;
  readonly detail: string;
  /** Wall time of the row, ms. */
  readonly ms: number;
  readonly exchanges: readonly Recorded[];
}

export interface ConformanceReport {
  readonly operator: {
    readonly id: string;
    readonly form: 'A' | 'B';
    readonly base_url: string;
    readonly preset: string;
    readonly timeout_ms: number;
    readonly amount_format: string;
  };
  readonly player: { readonly user_id: string; readonly currency: string; readonly session_token: string };
  /** ISO 8601 start of the run. */
  readonly started_at: string;
  /** True when every row passed. */
  readonly passed: boolean;
  readonly rows: readonly RowResult[];
}

export interface RunDeps {
  readonly client: CallbackClient;
  readonly currencies: Currencies;
  /** Run only these rows (default: all, in order). */
  readonly only?: readonly RowId[];
  /**
   * Unix ms after which no further row starts (default: none): each row left fails with "not run".
   * A row already started ends within its requests' timeouts (the operator's plus RULE_SLACK_MS each).
   */
  readonly deadlineAt?: number;
}

/** `verdict`, failed when an ok answer among `exchanges` does not match its schema (which and why). */
function withSchemas(verdict: { pass: boolean; detail: string }, exchanges: readonly Recorded[]) {
  const bad = exchanges.filter((x) => x.schema !== null && x.schema.problems.length > 0);
  if (bad.length === 0) return verdict;
  const why = bad.map(
    (x) =>
      `the answer to "${x.step}" does not match schemas/callbacks/${x.schema?.name}.response.json: ${x.schema?.problems.join(', ')}`,
  );
  return { pass: false, detail: [...why, verdict.detail].filter((d) => d !== '').join('; ') };
}

/**
 * Runs the rows against `target`. Never throws for what the operator does: a row whose balance
 * cannot be read, or that meets an error, fails with the reason.
 * @throws MoneyError CURRENCY_UNKNOWN when the player's currency is not in `currencies`.
 */
export async function runConformance(target: Target, deps: RunDeps): Promise<ConformanceReport> {
  const { operator: op, player } = target;
  const exponent = deps.currencies.exponentOf(player.currency);
  const driver = new Driver(
    target,
    deps.client,
    deps.currencies,
    op.timeoutMs + RULE_SLACK_MS,
    callbackSchemas(),
  );
  // Below 2^52 + 2^49: room for millions of bets under 2^53.
  let next = ID_FLOOR + 4 * randomInt(0, 2 ** 47);
  const ctx: RowContext = {
    driver,
    player,
    nextBet(): BetIds {
      const bet = next;
      next += 4;
      return { bet, win: bet + 1, rollback: bet + 2, round: bet };
    },
    stakeMinor: 10 ** exponent,
    timeoutMs: op.timeoutMs,
    format: (minor) => deps.currencies.formatMinor(minor, player.currency),
    toMinor: (value) => balanceMinor(deps.currencies, value, player.currency),
  };
  const startedAt = new Date().toISOString();
  const rows: RowResult[] = [];
  for (const row of ROWS) {
    if (deps.only && !deps.only.includes(row.id)) continue;
    const from = driver.records.length;
    const t0 = Date.now();
    if (deps.deadlineAt !== undefined && t0 >= deps.deadlineAt) {
      const detail = `not run: the run's time limit (${new Date(deps.deadlineAt).toISOString()}) had passed`;
      rows.push({ id: row.id, title: row.title, rule: row.rule, pass: false, detail, ms: 0, exchanges: [] });
      continue;
    }
    let verdict: { pass: boolean; detail: string };
    try {
      verdict = await row.run(ctx);
    } catch (err) {
      const why = err instanceof RowAbort ? err.message : `error: ${(err as Error).message}`;
      verdict = { pass: false, detail: why };
    }
    verdict = withSchemas(verdict, driver.records.slice(from));
    rows.push({
      id: row.id,
      title: row.title,
      rule: row.rule,
      ...verdict,
      ms: Date.now() - t0,
      exchanges: driver.records.slice(from),
    });
  }
  return {
    operator: {
      id: op.operatorId,
      form: op.form,
      base_url: op.baseUrl,
      preset: op.answers.preset,
      timeout_ms: op.timeoutMs,
      amount_format: op.amountFormat,
    },
    player: { user_id: player.userId, currency: player.currency, session_token: player.sessionToken },
    started_at: startedAt,
    passed: rows.every((r) => r.pass),
    rows,
  };
}
