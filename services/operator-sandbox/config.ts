/**
 * The operator sandbox's configuration (lib/config/core.ts).
 *
 * Its own settings (environment variable → meaning, default):
 * - SANDBOX_HOST / SANDBOX_PORT: the reference operator wallet (127.0.0.1 / 8090; 0 = any free port).
 *   Its /_sandbox/* admin routes are unauthenticated: keep it on loopback.
 * - SANDBOX_SIGNING_SECRET: the Standard Webhooks secret (`whsec_` + base64) callbacks must be signed with.
 *   Empty: derived from 32 random bytes created once in SANDBOX_SECRET_FILE (never a fixed dev secret).
 * - SANDBOX_SECRET_FILE: where a generated sandbox signing key is kept (.data/sandbox/signing-secret).
 * - SANDBOX_DB_SCHEMA: Postgres schema of the sandbox's own ledger (sandbox).
 * - SANDBOX_INITIAL_BALANCE: balance of an account at first sight, major units of its currency with at
 *   most 12 decimals; digits past a currency's exponent are dropped for it (1000.00: 1000.00 USD, 1000 JPY).
 * - SANDBOX_ANSWER_PRESET: how the sandbox answers, as an operator of that answer preset
 *   (rules/wallet/answers.ts; presets.ts): `seed`, `http-status` or `status-in-body`. Empty (the
 *   default): `status-in-body` when SANDBOX_STRICT is on, else `http-status`.
 * - SANDBOX_STRICT: `true` plays the strictest operator (mode.ts): exact callback
 *   bodies (schemas/callbacks), no win without a booked bet, free bets included (false).
 * Both can be changed at run time through PUT /_sandbox/mode (admin.ts).
 * Shared: DATABASE_*, LOG_LEVEL, SHUTDOWN_TIMEOUT_MS, CRYPTO_CURRENCIES (lib/config/shared.ts).
 */
import { z } from 'zod';
import { bool, configLoader, dataPath, host, port, section, sqlIdentifier } from '../../lib/config/core.ts';
import { dbSection, moneySection, processSection } from '../../lib/config/shared.ts';
import { ANSWER_PRESETS } from '../../rules/wallet/answers.ts';

export const sandboxSection = section({
  name: 'sandbox',
  prefixes: ['SANDBOX_'],
  shape: {
    SANDBOX_HOST: host.default('127.0.0.1'),
    SANDBOX_PORT: port.default(8090),
    SANDBOX_SIGNING_SECRET: z
      .string()
      .regex(/^(whsec_[A-Za-z0-9+/]+={0,2})?$/, 'whsec_ followed by base64')
      .default(''),
    SANDBOX_SECRET_FILE: dataPath('sandbox', 'signing-secret'),
    SANDBOX_DB_SCHEMA: sqlIdentifier.default('sandbox'),
    SANDBOX_INITIAL_BALANCE: z
      .string()
      .regex(/^\d{1,15}(\.\d{1,12})?$/, 'a non-negative decimal with at most 12 decimals')
      .default('1000.00'),
    SANDBOX_ANSWER_PRESET: z.enum(['', ...ANSWER_PRESETS]).default(''),
    SANDBOX_STRICT: bool.default(false),
  },
  build: (r) => ({
    host: r.SANDBOX_HOST,
    port: r.SANDBOX_PORT,
    /** `whsec_…`, or '' when the key comes from `secretFile`. */
    signingSecret: r.SANDBOX_SIGNING_SECRET,
    secretFile: r.SANDBOX_SECRET_FILE,
    dbSchema: r.SANDBOX_DB_SCHEMA,
    /** Balance of a new account, major units (a decimal string; money.ts reads it per currency). */
    initialBalance: r.SANDBOX_INITIAL_BALANCE,
    /** The answer preset played; null: the default of the strictness (mode.ts). */
    answerPreset: r.SANDBOX_ANSWER_PRESET === '' ? null : r.SANDBOX_ANSWER_PRESET,
    strict: r.SANDBOX_STRICT,
  }),
});

/** The sandbox's validated, frozen configuration. @throws ConfigError naming each bad or unknown setting. */
export const loadSandboxConfig = configLoader([dbSection, processSection, moneySection, sandboxSection]);
export type SandboxConfig = ReturnType<typeof loadSandboxConfig>;
