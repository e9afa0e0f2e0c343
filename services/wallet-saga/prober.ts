/**
 * Half-open probes of open circuit breakers (rules/wallet/breaker.ts): every
 * `intervalMs`, for each operator whose breaker is open and whose probe time has come, one
 * instance claims the probe (moving its time on, so other instances skip it) and asks the
 * operator's balance callback (docs/contract.md "Implemented by the operator": user_id, currency, session_token → user_id,
 * currency, balance, platform_session_token) for the player of the last failed bet. An answer with
 * a balance closes the breaker; anything else keeps it open for a longer cooldown. A probe is not a
 * callback: it is never recorded in wallet_callback_attempts (only the dispatcher's results are).
 */
import { openBreakers, updateBreaker } from '../../lib/db/operator-breakers.ts';
import type { Sql } from '../../lib/db/pool.ts';
import type { CallbackClient } from '../../lib/http/callback-client.ts';
import type { Logger } from '../../lib/logger.ts';
import { buildBalanceRequest } from '../../rules/wallet/bodies.ts';
import { afterProbe, type BreakerConfig, probeDue } from '../../rules/wallet/breaker.ts';
import { signingSecretsAt } from '../../rules/wallet/signing.ts';
import type { Directory, SagaOperator } from './directory.ts';
import type { SagaMetrics } from './metrics.ts';

export interface ProberDeps {
  readonly sql: Sql;
  readonly directory: Directory;
  readonly client: CallbackClient;
  readonly metrics: SagaMetrics;
  readonly logger: Logger;
  readonly now: () => number;
  readonly breaker: BreakerConfig;
  readonly intervalMs: number;
  /** Called when a probe closed an operator's breaker (the dispatcher pulls its retries forward). */
  readonly onClosed?: (operatorId: string) => void;
}

export interface Prober {
  start(): void;
  stop(): Promise<void>;
  /** One pass (tests). */
  probeOnce(): Promise<void>;
}

/** Whether a balance answer under `op`'s preset is an answer with a balance. */
function balanceAnswered(op: SagaOperator, status: number, text: string): boolean {
  if (status < 200 || status >= 300) return false;
  try {
    const j = JSON.parse(text) as Record<string, unknown>;
    if (op.answers.preset === 'status-in-body' && !op.answers.okStatuses.includes(String(j.status)))
      return false;
    return typeof j.balance === 'string' || typeof j.balance === 'number';
  } catch {
    return false;
  }
}

/** Builds the prober; nothing runs before `start`. */
export function createProber(deps: ProberDeps): Prober {
  const { sql, now } = deps;
  const log = deps.logger.child({ component: 'breaker-prober' });
  let timer: NodeJS.Timeout | null = null;
  let running: Promise<void> | null = null;
  let stopped = false;

  const probe = async (
    operatorId: string,
    target: { user_id: string; currency: string; session_id: string } | null,
  ) => {
    // Claim: move the probe time on; only the instance whose update found it due goes on.
    const claimed = await sql`
      update operator_breakers set retry_at = ${now() + deps.breaker.cooldownMs}
      where operator_id = ${operatorId} and state = 'open' and retry_at <= ${now()} returning 1`;
    if (claimed.length === 0) return;
    const op = await deps.directory.operator(operatorId, now());
    const session = target ? await deps.directory.session(target.session_id) : null;
    let ok = false;
    let error: string | null = 'no player to probe with';
    if (op && target && session) {
      const ex = await deps.client.send(
        buildBalanceRequest(
          op,
          { userId: target.user_id, currency: target.currency, sessionToken: session.sessionToken },
          `balance-probe-${operatorId}-${now()}`,
        ),
        signingSecretsAt(op, Date.now()),
        op.timeoutMs,
        Date.now(), // signed at the wall-clock time (see the dispatcher)
      );
      ok = ex.type === 'answer' && balanceAnswered(op, ex.status, ex.text);
      error = ok
        ? null
        : ex.type === 'answer'
          ? `balance probe: HTTP ${ex.status}`
          : ex.type === 'timeout'
            ? 'balance probe timed out'
            : ex.reason;
    } else if (!op) error = 'operator unknown or disabled';
    const { after } = await updateBreaker(
      sql,
      operatorId,
      (s) => afterProbe(s, ok, error, now(), deps.breaker),
      now(),
    );
    deps.metrics.breakerOpen.set({ operator: operatorId }, after.state === 'open' ? 1 : 0);
    if (ok) {
      log.info({ operator: operatorId }, 'operator circuit breaker closed by a successful probe');
      deps.onClosed?.(operatorId);
    } else
      log.warn(
        { operator: operatorId, error, retryAt: after.retryAt },
        'half-open probe failed; breaker stays open',
      );
  };

  const probeOnce = async () => {
    const open = await openBreakers(sql);
    const at = now();
    for (const b of open) deps.metrics.breakerOpen.set({ operator: b.operatorId }, 1);
    await Promise.all(open.filter((b) => probeDue(b.state, at)).map((b) => probe(b.operatorId, b.probe)));
  };

  const tick = () => {
    timer = null;
    if (stopped) return;
    running = probeOnce()
      .catch((err) => log.warn({ err: (err as Error).message }, 'breaker probe pass failed'))
      .finally(() => {
        running = null;
        if (!stopped) timer = setTimeout(tick, deps.intervalMs);
      });
  };

  return {
    start() {
      if (!timer && !stopped) timer = setTimeout(tick, deps.intervalMs);
    },
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      await running;
    },
    probeOnce,
  };
}
