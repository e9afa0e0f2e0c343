/**
 * Money and transaction ids of the wallet (issue 5). Amounts travel as integer minor units
 * (exponent 2 for every supported currency) inside the platform, and as the seed's forms at the
 * operator boundary: callback `amount` a JSON number in major units, balances decimal strings
 * ("12.50", seed 001 "Balances are decimal strings").
 */

/** ISO 4217 currencies accepted on request-access and free bets; all have two decimals. */
export const CURRENCIES = [
  'USD',
  'EUR',
  'GBP',
  'BRL',
  'CAD',
  'AUD',
  'MXN',
  'ARS',
  'CLP',
  'PEN',
  'COP',
] as const;

/** True when `c` is a supported currency code. */
export function isCurrency(c: string): boolean {
  return (CURRENCIES as readonly string[]).includes(c);
}

/** Minor units to a decimal string with two decimals: 1250 → "12.50", -5 → "-0.05". */
export function toDecimalString(minor: number): string {
  const sign = minor < 0 ? '-' : '';
  const abs = Math.abs(minor);
  return `${sign}${Math.floor(abs / 100)}.${String(abs % 100).padStart(2, '0')}`;
}

/** Minor units to the JSON number of a callback's `amount`: 1250 → 12.5. */
export function toMajorNumber(minor: number): number {
  return minor / 100;
}

/**
 * A major-unit amount (JSON number or decimal string) to minor units.
 * @returns undefined when it is not finite, negative, or has more than two decimals.
 */
export function toMinor(amount: number | string): number | undefined {
  const s = typeof amount === 'number' ? (Number.isFinite(amount) ? String(amount) : '') : amount.trim();
  const m = /^(\d{1,13})(?:\.(\d{1,2}))?$/.exec(s);
  if (!m) return undefined;
  return Number(m[1]) * 100 + Number((m[2] ?? '').padEnd(2, '0'));
}

/** provider_tx_id of a bet from a wallet_tx_seq value: a multiple of 4. */
export const betTxId = (seq: number): number => seq * 4;
/** provider_tx_id of a bet's win. */
export const winTxId = (betTxId: number): number => betTxId + 1;
/** provider_tx_id of a bet's rollback (compensation). */
export const rollbackTxId = (betTxId: number): number => betTxId + 2;
