/**
 * Where the sandbox's wallet answers and how long the saga waits for it: what the callback routes
 * serve (callbacks.ts), what the registration writes into its `operators` row (register.ts), and
 * what the quirks and the guide's examples assume (quirks.ts, examples.ts).
 */
import type { CallbackKind } from './wire.ts';

/** The sandbox's form-A paths, as register.ts writes them into its `operators` row. */
export const FORM_A_PATHS = {
  bet: '/wallet/bet',
  win: '/wallet/win',
  balance: '/wallet/balance',
  rollback: '/wallet/rollback',
} as const satisfies Record<CallbackKind, string>;

/** Callback timeout of the registered operator, ms (the saga's default: 10 s). */
export const SANDBOX_TIMEOUT_MS = 10_000;
