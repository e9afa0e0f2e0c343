/**
 * Transaction ids of the wallet and the demo starting balance. Amounts are integer minor
 * units with each currency's exponent, and reach the wire through `Currencies.wireAmount`
 * (currencies.ts).
 */

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
