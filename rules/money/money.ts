/**
 * Transaction ids of the wallet (issue 5), and the one money helper the wallet saga still calls
 * until it puts amounts on the wire through `Currencies.wireAmount` (currencies.ts, issue 12
 * item 5). Amounts are integer minor units with each currency's exponent: currencies.ts.
 */

/**
 * Minor units to a JSON number in major units at exponent 2: 1250 → 12.5.
 * @deprecated Wrong for every currency whose exponent is not 2 (JPY, KWD, BTC …); kept only for
 *   rules/wallet/bodies.ts until it calls `Currencies.wireAmount(minor, currency, format)`.
 */
export function toMajorNumber(minor: number): number {
  return minor / 100;
}

/**
 * Virtual starting balance of a demo session that names none, in major units of its currency
 * (1000.00 USD, 1000 JPY, 1000.00000000 BTC); the API debits it, the wallet projection shows it.
 */
export const DEMO_START_MAJOR = 1000;

/** provider_tx_id of a bet from a wallet_tx_seq value: a multiple of 4. */
export const betTxId = (seq: number): number => seq * 4;
/** provider_tx_id of a bet's win. */
export const winTxId = (betTxId: number): number => betTxId + 1;
/** provider_tx_id of a bet's rollback (compensation). */
export const rollbackTxId = (betTxId: number): number => betTxId + 2;
