/**
 * Slot machine: 3 reels, each stopping on one of six symbols drawn with the weights below
 * (32 stops per reel, so a 5-bit draw is exactly unbiased). Reel k (0, 1, 2) reads the unsigned
 * 32-bit big-endian integer v at bytes 4k..4k+3 of the round HMAC and stops at
 * floor(v * 32 / 2^32) on the strip (symbols in SYMBOLS order, each repeated `weight` times).
 *
 * Paytable: three of a kind pays THREE_OF_A_KIND[symbol]; otherwise exactly two cherries
 * anywhere pay TWO_CHERRIES; everything else pays 0. RTP = exactRtp() ≈ 96.5%.
 */
import type { RoundResult } from '../rounds/round.ts';

/** Symbols and their stops per reel (sum 32). */
export const SYMBOLS = [
  { name: 'cherry', weight: 6 },
  { name: 'lemon', weight: 10 },
  { name: 'bell', weight: 7 },
  { name: 'bar', weight: 5 },
  { name: 'seven', weight: 3 },
  { name: 'diamond', weight: 1 },
] as const;
export type SlotSymbol = (typeof SYMBOLS)[number]['name'];

/** Multiplier in hundredths for three of a kind. */
export const THREE_OF_A_KIND: Readonly<Record<SlotSymbol, number>> = {
  diamond: 50_000,
  seven: 10_000,
  bar: 4_000,
  bell: 1_700,
  cherry: 1_000,
  lemon: 700,
};
/** Multiplier in hundredths for exactly two cherries. */
export const TWO_CHERRIES = 300;
export const REELS = 3;
/** Betting window, ms at speed 1 (a quick spin game). */
export const SLOT_BETTING_MS = 3000;
/** The reels' spin after betting closes, ms at speed 1. */
export const SLOT_SPIN_MS = 2000;

const STRIP: readonly SlotSymbol[] = SYMBOLS.flatMap((s) => Array<SlotSymbol>(s.weight).fill(s.name));
const STOPS = STRIP.length;

type SlotResult = Extract<RoundResult, { game: 'slot' }>;

/** Payout in hundredths of the stake for the symbols shown. @throws RangeError for other than 3 reels. */
export function payoutHundredths(reels: readonly SlotSymbol[]): number {
  if (reels.length !== REELS) throw new RangeError(`expected ${REELS} reels, got ${reels.length}`);
  const [a, b, c] = reels as [SlotSymbol, SlotSymbol, SlotSymbol];
  if (a === b && b === c) return THREE_OF_A_KIND[a];
  return reels.filter((s) => s === 'cherry').length === 2 ? TWO_CHERRIES : 0;
}

function formatHundredths(h: number): string {
  return `${Math.floor(h / 100)}.${(h % 100).toString().padStart(2, '0')}`;
}

/** Slot result from the round HMAC (at least 12 bytes). @throws RangeError when shorter. */
export function slot(hmac: Uint8Array): SlotResult {
  if (hmac.length < 4 * REELS) throw new RangeError(`need ${4 * REELS} bytes, got ${hmac.length}`);
  const view = new DataView(hmac.buffer, hmac.byteOffset, hmac.byteLength);
  const reels: SlotSymbol[] = [];
  for (let k = 0; k < REELS; k++) {
    const v = view.getUint32(4 * k, false);
    reels.push(STRIP[Math.floor((v * STOPS) / 2 ** 32)] as SlotSymbol);
  }
  return { game: 'slot', reels, multiplier: formatHundredths(payoutHundredths(reels)) };
}

/**
 * Every distinct payout (hundredths) with its exact probability, by enumerating all
 * 32^3 reel stops' symbol combinations weighted by stops.
 */
export function payoutDistribution(): Map<number, number> {
  const dist = new Map<number, number>();
  const total = STOPS ** REELS;
  for (const a of SYMBOLS)
    for (const b of SYMBOLS)
      for (const c of SYMBOLS) {
        const pay = payoutHundredths([a.name, b.name, c.name]);
        dist.set(pay, (dist.get(pay) ?? 0) + (a.weight * b.weight * c.weight) / total);
      }
  return dist;
}

/** Return to player: expected multiplier per unit staked, exact by enumeration (≈ 0.965). */
export function exactRtp(): number {
  let rtp = 0;
  for (const [pay, p] of payoutDistribution()) rtp += (pay / 100) * p;
  return rtp;
}

/** From betting closed to the result, ms before the speed factor (constant: nothing leaks the result). */
export function slotResultMs(_result: SlotResult): number {
  return SLOT_SPIN_MS;
}
