/**
 * The sandbox's unsigned admin routes (bind the sandbox to loopback): fault rules and the
 * reconciliation reads that tests compare with the platform's read models.
 * - GET /_sandbox/faults → {rules}; PUT /_sandbox/faults with a JSON array of rules (faults.ts)
 *   replaces them → {rules}; DELETE /_sandbox/faults clears them → {rules: []}.
 * - GET /_sandbox/quirks → {quirks, slowMs}; PUT /_sandbox/quirks with {quirks: [names], slowMs?}
 *   (quirks.ts: rule-breakers for the conformance kit) replaces them; DELETE clears them.
 * - GET /_sandbox/mode → {preset, strict}; PUT /_sandbox/mode with {preset?, strict?} (mode.ts: the
 *   answer preset played and the strict switch; strict alone also takes its default preset)
 *   changes what it names; DELETE goes back to the configured mode.
 * - GET /_sandbox/ledger?user_id=&currency= → {user_id, currency, balance, balance_minor,
 *   transactions: [{operator_tx_id, kind, provider_tx_id, linked_tx_id, amount_minor, delta_minor,
 *   round_id, game, created_at}]} in ledger order; 404 ACCOUNT_NOT_FOUND for an account never seen.
 * - GET /_sandbox/accounts → {accounts: [{user_id, currency, balance, balance_minor}]}.
 * - PUT /_sandbox/signing-secret with {secret: 'whsec_…'} replaces the secret callbacks are
 *   verified with (secret.ts: an operator switching to a rotated secret) → 204; DELETE goes back
 *   to the configured one → 204. The secret is never answered nor logged.
 * Amounts are minor units (integers); `balance` is the decimal string the callbacks answer (in the
 * currency's precision).
 */
import type { FastifyInstance } from 'fastify';
import type { Sql } from '../../lib/db/pool.ts';
import type { Currencies } from '../../rules/money/currencies.ts';
import { SandboxError } from './errors.ts';
import { type FaultInjector, faultRulesSchema } from './faults.ts';
import { type Mode, modeBodySchema } from './mode.ts';
import { type Quirks, quirksBodySchema } from './quirks.ts';
import { signingSecretBodySchema, type VerifyingSecret } from './secret.ts';
import { check, parseJson } from './wire.ts';

/** Registers /_sandbox/* on `app`. */
export function registerAdmin(
  app: FastifyInstance,
  deps: {
    sql: Sql;
    faults: FaultInjector;
    quirks: Quirks;
    mode: Mode;
    secret: VerifyingSecret;
    currencies: Currencies;
  },
): void {
  const { sql, faults, quirks, mode, secret, currencies } = deps;
  // An account in a currency the table no longer has still shows its minor units.
  const balanceText = (minor: number, currency: string) =>
    currencies.isCurrency(currency) ? currencies.formatMinor(minor, currency) : String(minor);
  app.get('/_sandbox/faults', async () => ({ rules: faults.list() }));
  app.put('/_sandbox/faults', async (request) => {
    faults.set(check(faultRulesSchema, parseJson(request.body), 'fault rules'));
    return { rules: faults.list() };
  });
  app.delete('/_sandbox/faults', async () => {
    faults.clear();
    return { rules: [] };
  });
  app.get('/_sandbox/quirks', async () => quirks.list());
  app.put('/_sandbox/quirks', async (request) => {
    quirks.set(check(quirksBodySchema, parseJson(request.body), 'quirks'));
    return quirks.list();
  });
  app.delete('/_sandbox/quirks', async () => {
    quirks.clear();
    return quirks.list();
  });
  app.get('/_sandbox/mode', async () => mode.list());
  app.put('/_sandbox/mode', async (request) =>
    mode.set(check(modeBodySchema, parseJson(request.body), 'mode')),
  );
  app.delete('/_sandbox/mode', async () => mode.reset());
  app.put('/_sandbox/signing-secret', async (request, reply) => {
    secret.replace(check(signingSecretBodySchema, parseJson(request.body), 'signing secret').secret);
    return reply.code(204).send();
  });
  app.delete('/_sandbox/signing-secret', async (_request, reply) => {
    secret.reset();
    return reply.code(204).send();
  });

  app.get('/_sandbox/ledger', async (request) => {
    const q = request.query as Record<string, unknown>;
    const userId = typeof q.user_id === 'string' ? q.user_id : '';
    const currency = typeof q.currency === 'string' ? q.currency : '';
    if (userId === '' || currency === '')
      throw new SandboxError('BAD_REQUEST', 'query parameters user_id and currency are required');
    const [account] =
      await sql`select balance_minor from accounts where user_id = ${userId} and currency = ${currency}`;
    if (!account) throw new SandboxError('ACCOUNT_NOT_FOUND', `no account ${userId} in ${currency}`);
    const rows =
      await sql`select operator_tx_id, kind, provider_tx_id, linked_tx_id, amount_minor, delta_minor,
                                  round_id, game, created_at
                           from transactions where user_id = ${userId} and currency = ${currency}
                           order by operator_tx_id`;
    const balanceMinor = Number(account.balance_minor);
    return {
      user_id: userId,
      currency,
      balance: balanceText(balanceMinor, currency),
      balance_minor: balanceMinor,
      transactions: rows.map((t) => ({
        operator_tx_id: String(t.operator_tx_id),
        kind: t.kind as string,
        provider_tx_id: t.provider_tx_id as string,
        linked_tx_id: (t.linked_tx_id as string | null) ?? null,
        amount_minor: Number(t.amount_minor),
        delta_minor: Number(t.delta_minor),
        round_id: t.round_id as string,
        game: t.game as string,
        created_at: (t.created_at as Date).toISOString(),
      })),
    };
  });

  app.get('/_sandbox/accounts', async () => {
    const rows = await sql`select user_id, currency, balance_minor from accounts order by user_id, currency`;
    return {
      accounts: rows.map((a) => ({
        user_id: a.user_id as string,
        currency: a.currency as string,
        balance: balanceText(Number(a.balance_minor), a.currency as string),
        balance_minor: Number(a.balance_minor),
      })),
    };
  });
}
