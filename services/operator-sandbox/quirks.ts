/**
 * Rule-breakers of the sandbox: named ways in which a careless operator wallet
 * breaks the money rules, each switched on through PUT /_sandbox/quirks (admin.ts) so that the
 * wallet conformance kit (`npm run wallet:conformance`, docs/operators.md "Conformance kit") can be
 * shown to fail exactly the row that checks that rule. A clean sandbox has none and passes every row.
 *
 * | quirk | what the sandbox then does wrong | row of the kit that fails |
 * |---|---|---|
 * | debit-duplicates | a bet sent again with the same id and body is debited again | bet-replay |
 * | ignore-amount-on-replay | a bet id sent again with another amount answers the first answer (200) | bet-other-amount |
 * | accept-late-bet | a bet whose rollback arrived first is debited | rollback-before-bet |
 * | refund-unknown-rollback | a rollback of a bet it never booked credits the rollback's amount | rollback-unknown |
 * | credit-after-rollback | a win of a rolled-back bet is credited | win-after-rollback |
 * | refund-after-win | a rollback of a bet that was won refunds its stake | rollback-after-win |
 * | no-insufficient-funds-check | a bet above the balance is attempted (the ledger's own constraint then fails it: 500) | bet-over-balance |
 * | slow-answers | every callback is answered `slowMs` late | timeout |
 * | accept-any-signature | webhook-* headers are not checked | signature |
 * | extra-answer-field | every success answer also carries `bonus_balance`, a field the seed does not list | every row with a success answer (its schema, schemas/callbacks) |
 *
 * Quirks are the app's live state, like fault rules (faults.ts): they apply to the next request.
 */
import { z } from 'zod';
import { SANDBOX_TIMEOUT_MS } from './wallet-endpoints.ts';

export const QUIRKS = [
  'debit-duplicates',
  'ignore-amount-on-replay',
  'accept-late-bet',
  'refund-unknown-rollback',
  'credit-after-rollback',
  'refund-after-win',
  'no-insufficient-funds-check',
  'slow-answers',
  'accept-any-signature',
  'extra-answer-field',
] as const;
export type Quirk = (typeof QUIRKS)[number];

/**
 * Delay of `slow-answers` when none is given, ms: just past the callback timeout the sandbox
 * registers itself with (register.ts), so the registered sandbox fails the kit's timeout row.
 */
export const DEFAULT_SLOW_MS = SANDBOX_TIMEOUT_MS + 1_000;

/** Body of PUT /_sandbox/quirks. */
export const quirksBodySchema = z.strictObject({
  quirks: z.array(z.enum(QUIRKS)).max(QUIRKS.length),
  /** How late `slow-answers` answers, ms. */
  slowMs: z.number().int().min(0).max(600_000).optional(),
});
export type QuirksBody = z.infer<typeof quirksBodySchema>;

/** What the ledger and the routes ask of the quirks. */
export interface QuirkCheck {
  has(quirk: Quirk): boolean;
}

/** No quirk: the sandbox as it should be. */
export const NO_QUIRKS: QuirkCheck = Object.freeze({ has: () => false });

/** The quirks switched on in one app, shared by its routes. */
export class Quirks implements QuirkCheck {
  private on = new Set<Quirk>();
  private slow = DEFAULT_SLOW_MS;

  /** Replaces the set (and the slow delay: `slowMs` or the default). */
  set(body: QuirksBody): void {
    this.on = new Set(body.quirks);
    this.slow = body.slowMs ?? DEFAULT_SLOW_MS;
  }

  clear(): void {
    this.set({ quirks: [] });
  }

  has(quirk: Quirk): boolean {
    return this.on.has(quirk);
  }

  /** Delay of `slow-answers`, ms. */
  get slowMs(): number {
    return this.slow;
  }

  /** The state as the admin routes show it. */
  list(): { quirks: Quirk[]; slowMs: number } {
    return { quirks: QUIRKS.filter((q) => this.on.has(q)), slowMs: this.slow };
  }
}
