/**
 * Where an SSE resume finds the rounds a reconnecting subscriber missed: the stream core's, shared
 * by every protocol (lib/stream/recent.ts for the newest rounds in memory, lib/stream/log-cursor.ts
 * for the log itself). Kept under this name for the SSE tests that check the memory side.
 */
export { RECENT_PER_GAME, RecentRounds } from '../../../../lib/stream/recent.ts';
