/**
 * The proxy's relay of StreamRoundEvents as Server-Sent Events, so a page resumes
 * through gRPC just as it does on /sse: a round is `event: message` (`initial` for the latest sent
 * on subscribe) with its position as `id:` — EventSource then resumes by itself with
 * `Last-Event-ID` — the resume verdict is `event: recovered` (when the page asked with
 * `envelope=1`), lifecycle messages are `event: round-opened` / `event: betting-closed`, with the
 * position of the last round before them as their `id:` (every event carries one). Data are
 * the same JSON forms as on /sse (the seed's stream form; lib/stream/lifecycle.ts).
 */
import type { LifecycleMsg, RoundEventMsg } from '../grpc/proto.ts';
import { streamFormOf } from './relay.ts';

/** The JSON form of a lifecycle message (proto3 leaves default values out; they are put back). */
export function lifecycleFormOf(m: LifecycleMsg): Record<string, unknown> {
  const common = { game_slug: m.game_slug ?? '', game_id: m.game_id ?? 0, round_id: Number(m.round_id ?? 0) };
  if (m.event === 'betting-closed')
    return { event: m.event, ...common, at: m.at ?? '', timestamp: Number(m.timestamp ?? 0) };
  return {
    event: m.event,
    ...common,
    betting_opens_at: m.betting_opens_at ?? '',
    betting_closes_at: m.betting_closes_at ?? '',
    commitment: m.commitment ?? '',
    chain_epoch: Number(m.chain_epoch ?? 0),
    chain_index: Number(m.chain_index ?? 0),
    speed: m.speed ?? 0,
    timestamp: Number(m.timestamp ?? 0),
  };
}

/** The SSE text of one RoundEvent; `announce`: send the `recovered` event. */
export function eventFrame(announce: boolean): (e: RoundEventMsg) => string {
  return (e) => {
    const id = e.position ? `id: ${e.position}\n` : '';
    if (e.type === 'round' && e.round)
      return `event: ${e.initial ? 'initial' : 'message'}\n${id}data: ${JSON.stringify(streamFormOf(e.round))}\n\n`;
    if (e.type === 'recovered' && announce) {
      const r = e.recovered;
      const info = {
        recovered: r?.recovered === true,
        since: r?.since ? r.since : null,
        replayed: Number(r?.replayed ?? 0),
        ...(r?.reason ? { reason: r.reason } : {}),
      };
      return `event: recovered\n${id}data: ${JSON.stringify(info)}\n\n`;
    }
    if (e.type === 'lifecycle' && e.lifecycle)
      return `event: ${e.lifecycle.event}\n${id}data: ${JSON.stringify(lifecycleFormOf(e.lifecycle))}\n\n`;
    return ''; // heartbeats: the relay writes its own `: heartbeat` comments
  };
}
