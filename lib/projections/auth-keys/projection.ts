/**
 * The auth-keys projection's pure fold: a batch of key events becomes one patch per key id, so a
 * single SQL statement can apply the batch (its CTEs cannot see each other's rows, hence a key
 * created and revoked in the same batch is written as one row already revoked).
 */

import type { KeyCreated } from '../../../schemas/generated/avro.ts';
import type { KeyEvent } from '../../auth/key-events.ts';

/** What a batch does to one key. Times are Unix ms. */
export interface KeyPatch {
  readonly keyId: string;
  /** The (latest) creation in the batch, with what followed it folded in. */
  created: KeyCreated | null;
  revokedAt: number | null;
  deleted: boolean;
}

/** Folds `events` (in log order) into patches, in first-seen order of key id. */
export function foldKeyEvents(events: readonly KeyEvent[]): KeyPatch[] {
  const out = new Map<string, KeyPatch>();
  for (const e of events) {
    const id = e.type === 'tombstone' ? e.keyId : e.value.key_id;
    let p = out.get(id);
    if (!p) {
      p = { keyId: id, created: null, revokedAt: null, deleted: false };
      out.set(id, p);
    }
    if (e.type === 'KeyCreated') {
      p.created = e.value;
      p.revokedAt = null;
      p.deleted = false;
    } else if (e.type === 'KeyRevoked') p.revokedAt ??= e.value.at;
    else p.deleted = true;
  }
  return [...out.values()];
}
