/**
 * GET /api/portal/reconciliation?date=YYYY-MM-DD&format=json|csv: every real-money wallet
 * transaction of the session's operator requested on that UTC day, with the state the operator's
 * ledger should show for it, from the wallet_transactions read model (the record of truth for an
 * operator's ledger: docs/decisions/console/0003-reconciliation-from-wallet-transactions.md).
 * Amounts are minor units (integers), times ISO 8601 UTC. CSV (RFC 4180, csv-stringify) has a
 * header row and the JSON rows' columns in the same order.
 */
import { stringify } from 'csv-stringify/sync';
import type { FastifyInstance } from 'fastify';
import type { Budget } from '../../../lib/auth/failure-budget.ts';
import type { Sql } from '../../../lib/db/pool.ts';
import { parseInput } from '../access/input.ts';
import { requirePortal } from './guard.ts';
import { reconciliationQuery } from './input.ts';
import { type LedgerRow, ledgerOfDay } from './portal-store.ts';
import { portalSchemas } from './schemas.ts';

/**
 * What the operator's ledger should show: `booked` (the operator acknowledged it: the money moved),
 * `not_booked` (refused, or failed and compensated: no money moved for it), `outstanding` (not
 * final yet: in flight, retrying or parked for ops).
 */
export type LedgerState = 'booked' | 'not_booked' | 'outstanding';

const STATE_OF: Readonly<Record<LedgerRow['status'], LedgerState>> = {
  succeeded: 'booked',
  rejected: 'not_booked',
  pending: 'outstanding',
  failed: 'outstanding',
  parked: 'outstanding',
};

/** The columns of both forms, in order. */
export const RECONCILIATION_COLUMNS = [
  'tx_id',
  'kind',
  'bet_tx_id',
  'user_id',
  'round_id',
  'game',
  'amount_minor',
  'currency',
  'state',
  'status',
  'created_at',
  'finished_at',
] as const;

/** One transaction as both forms show it. */
function rowJson(r: LedgerRow) {
  const state = STATE_OF[r.status];
  return {
    tx_id: Number(r.tx_id),
    kind: r.kind,
    bet_tx_id: Number(r.bet_tx_id),
    user_id: r.user_id,
    round_id: Number(r.round_id),
    game: r.game,
    amount_minor: Number(r.amount_minor),
    currency: r.currency,
    state,
    status: r.status,
    created_at: r.requested_at.toISOString(),
    finished_at: state === 'outstanding' ? null : r.updated_at.toISOString(),
  };
}
type ReconciliationRow = ReturnType<typeof rowJson>;

/** Counts per state and, per currency, the booked amounts by kind (minor units). */
function totalsOf(rows: readonly ReconciliationRow[]) {
  const byState: Record<LedgerState, number> = { booked: 0, not_booked: 0, outstanding: 0 };
  const byCurrency = new Map<string, { bet_minor: number; win_minor: number; rollback_minor: number }>();
  for (const r of rows) {
    byState[r.state]++;
    if (r.state !== 'booked') continue;
    const t = byCurrency.get(r.currency) ?? { bet_minor: 0, win_minor: 0, rollback_minor: 0 };
    if (r.kind === 'bet') t.bet_minor += r.amount_minor;
    else if (r.kind === 'win' || r.kind === 'close') t.win_minor += r.amount_minor;
    else t.rollback_minor += r.amount_minor;
    byCurrency.set(r.currency, t);
  }
  return {
    transactions: rows.length,
    ...byState,
    booked_by_currency: [...byCurrency.entries()]
      .sort(([a], [b]) => (a < b ? -1 : 1))
      .map(([currency, t]) => ({
        currency,
        ...t,
        // What the player gained from the operator that day: credits minus debits.
        net_minor: t.win_minor + t.rollback_minor - t.bet_minor,
      })),
  };
}

/** Registers GET /api/portal/reconciliation. */
export function portalReconciliationRoute(app: FastifyInstance, deps: { sql: Sql; budget: Budget }): void {
  const { sql } = deps;
  app.get('/api/portal/reconciliation', { schema: portalSchemas.reconciliation }, async (req, reply) => {
    const s = await requirePortal({ sql, budget: deps.budget }, req, reply);
    const q = parseInput(reconciliationQuery, req.query, 'querystring');
    const rows = (await ledgerOfDay(sql, s.operator_id, Date.parse(`${q.date}T00:00:00Z`))).map(rowJson);
    if (q.format === 'csv') {
      const csv = stringify(rows, {
        header: true,
        columns: [...RECONCILIATION_COLUMNS],
        cast: { number: String },
      });
      return reply
        .type('text/csv; charset=utf-8')
        .header('content-disposition', `attachment; filename="reconciliation-${s.operator_id}-${q.date}.csv"`)
        .send(csv);
    }
    return { operator_id: s.operator_id, date: q.date, transactions: rows, totals: totalsOf(rows) };
  });
}
