/**
 * Fault injection for demos and tests: an ordered list of rules, the first rule
 * that matches a callback decides its fault. A rule with `count` fires that many times and is then
 * dropped, which makes tests deterministic; `probability` (0..1, default 1) makes it random with
 * the injected `random`. Pure: no clock, no I/O.
 *
 * Modes (what the callback route does, services/operator-sandbox/callbacks.ts):
 * - latency: waits `latencyMs` (default 1000 ms), then answers normally.
 * - error500: answers 500 without touching the ledger.
 * - timeout: commits nothing and holds the request `latencyMs` (default 60000 ms) or until the
 *   caller hangs up, then answers 500 if anyone still listens.
 * - commit-then-500: applies the movement, then answers 500.
 * - commit-then-drop: applies the movement, then destroys the connection without an answer.
 * - malformed: applies the movement, then answers 200 with a body that is not JSON. It commits
 *   because the contract makes the platform compensate a malformed bet answer with a rollback.
 */
import { z } from 'zod';
import type { CallbackKind } from './wire.ts';

export const FAULT_MODES = [
  'latency',
  'error500',
  'timeout',
  'commit-then-500',
  'commit-then-drop',
  'malformed',
] as const;
export type FaultMode = (typeof FAULT_MODES)[number];

/** One rule as PUT on /_sandbox/faults. */
export const faultRuleSchema = z.strictObject({
  kind: z.enum(['bet', 'win', 'rollback', 'balance']).optional(),
  mode: z.enum(FAULT_MODES),
  latencyMs: z.number().int().min(0).max(600_000).optional(),
  count: z.number().int().min(1).optional(),
  probability: z.number().min(0).max(1).optional(),
});
export type FaultRule = z.infer<typeof faultRuleSchema>;
export const faultRulesSchema = z.array(faultRuleSchema).max(100);

/** What to do to one callback. */
export interface Fault {
  readonly mode: FaultMode;
  /** ms; the mode's default when the rule has none. */
  readonly latencyMs: number;
}

const DEFAULT_MS: Record<FaultMode, number> = {
  latency: 1_000,
  error500: 0,
  timeout: 60_000,
  'commit-then-500': 0,
  'commit-then-drop': 0,
  malformed: 0,
};

/** The active rules; one per app, shared by its routes. */
export class FaultInjector {
  private rules: FaultRule[] = [];

  /** @param random uniform in [0, 1); Math.random in production, a fixed sequence in tests. */
  constructor(private readonly random: () => number = Math.random) {}

  /** Replaces every rule. */
  set(rules: readonly FaultRule[]): void {
    this.rules = rules.map((r) => ({ ...r }));
  }

  clear(): void {
    this.rules = [];
  }

  /** The rules with their remaining counts. */
  list(): FaultRule[] {
    return this.rules.map((r) => ({ ...r }));
  }

  /** The fault for one callback of `kind`, or null; spends one use of a counted rule. */
  take(kind: CallbackKind): Fault | null {
    for (let i = 0; i < this.rules.length; i++) {
      const r = this.rules[i] as FaultRule;
      if (r.kind !== undefined && r.kind !== kind) continue;
      if (r.probability !== undefined && !(this.random() < r.probability)) continue;
      if (r.count !== undefined) {
        if (r.count <= 1) this.rules.splice(i, 1);
        else r.count -= 1;
      }
      return { mode: r.mode, latencyMs: r.latencyMs ?? DEFAULT_MS[r.mode] };
    }
    return null;
  }
}
