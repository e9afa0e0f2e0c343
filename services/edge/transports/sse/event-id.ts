/**
 * SSE event ids are stream positions (lib/stream/position.ts): the same text on every protocol.
 * These names are the SSE vocabulary of the same functions (`Last-Event-ID`, `id:`).
 */
import type { Selection } from '../../../../lib/stream/hub.ts';
import {
  formatPosition,
  MAX_POSITION_LENGTH,
  type Position,
  parsePosition,
} from '../../../../lib/stream/position.ts';

export type { Position };

/** Longest id accepted (the position's limit). */
export const MAX_EVENT_ID_LENGTH = MAX_POSITION_LENGTH;

/** The id text of `p` (games in catalogue order, for stable ids). */
export const formatEventId = formatPosition;

export type ParsedEventId =
  | { readonly ok: true; readonly position: Position }
  | { readonly ok: false; readonly reason: string };

/**
 * Parses a Last-Event-ID for `selection`: a position (parsePosition); any fault rejects it, and
 * the caller starts live.
 */
export function parseEventId(selection: Selection, raw: string): ParsedEventId {
  return parsePosition(selection, raw);
}
