/**
 * The API's client of the round engine's internal cash-out decision (services/round-engine
 * http.ts POST /internal/cash-out): the request body signed with the key derived from the token
 * secret (lib/auth/internal-signature.ts, purpose `cash-out`).
 */
import { INTERNAL_SIGNATURE_HEADER, signInternal } from '../../../lib/auth/internal-signature.ts';
import { UnavailableError } from '../../../lib/errors.ts';
import type { GameSlug } from '../../../rules/games/catalog.ts';

/** The engine's answer (game-loop.ts CashOutAnswer). */
export type EngineCashOut =
  | { readonly status: 'accepted'; readonly multiplier: string; readonly at: number }
  | { readonly status: 'crashed' }
  | { readonly status: 'not-flying' };

export interface EngineClient {
  /**
   * Asks the engine to decide the cash-out of bet `txId` on crash round `roundId`.
   * @throws UnavailableError when the engine cannot be reached in `timeoutMs` or answers otherwise.
   */
  cashOut(game: GameSlug, roundId: number, txId: number): Promise<EngineCashOut>;
}

/** A client of the engine at `url` (origin), signing with `secret`; `timeoutMs` per request (2000). */
export function createEngineClient(url: string, secret: Buffer, timeoutMs = 2000): EngineClient {
  return {
    async cashOut(game, roundId, txId) {
      const body = JSON.stringify({ game, round_id: roundId, tx_id: txId });
      let res: Response;
      try {
        res = await fetch(`${url}/internal/cash-out`, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            [INTERNAL_SIGNATURE_HEADER]: signInternal(secret, 'cash-out', body),
          },
          body,
          signal: AbortSignal.timeout(timeoutMs),
        });
      } catch (err) {
        throw new UnavailableError('the round engine cannot be reached for the cash-out', err);
      }
      const answer = (await res.json().catch(() => null)) as EngineCashOut | null;
      const known = answer && ['accepted', 'crashed', 'not-flying'].includes(answer.status);
      if ((res.status !== 200 && res.status !== 409) || !known)
        throw new UnavailableError(`the round engine answered the cash-out with ${res.status}`);
      return answer;
    },
  };
}
