/**
 * Client commands of the envelope protocol (several subscriptions on one
 * connection, added and removed while connected), on WebSocket (text frames) and WebTransport
 * (lines on the client's stream). One JSON object each:
 *
 *   {"op": "subscribe", "sub": "game:crash" | "type:multiplier" | "all",
 *    "since"?: "<position>", "latest"?: true, "lifecycle"?: true}
 *   {"op": "unsubscribe", "sub": "game:crash"}
 *
 * `sub` names the selection, as in the envelopes. Bad commands are answered with an `error`
 * envelope (400 malformed, 404 unknown game or type), never by closing the connection.
 */
import {
  parseGameSelection,
  parseTypeSelection,
  type Selection,
  type SelectionResult,
  selectionLabel,
} from './selection.ts';

export interface SubscribeCommand {
  readonly op: 'subscribe';
  readonly selection: Selection;
  /** The selection's label (`game:crash`), the subscription's name in envelopes. */
  readonly sub: string;
  readonly since: string | undefined;
  readonly latest: boolean;
  readonly lifecycle: boolean;
}

export interface UnsubscribeCommand {
  readonly op: 'unsubscribe';
  readonly selection: Selection;
  readonly sub: string;
}

export type Command = SubscribeCommand | UnsubscribeCommand;

export type ParsedCommand =
  | { readonly ok: true; readonly command: Command }
  | {
      readonly ok: false;
      readonly status: 400 | 404;
      readonly error: string;
      readonly op?: string;
      readonly sub?: string;
    };

/** A subscription name (`game:<slug>`, `type:<type>`, `all`) as a selection; 400/404 as on paths. */
export function parseSubscriptionName(name: string): SelectionResult {
  if (name === 'all') return { ok: true, selection: { kind: 'all' } };
  if (name.startsWith('game:')) return parseGameSelection(name.slice(5));
  if (name.startsWith('type:')) return parseTypeSelection(name.slice(5));
  return { ok: false, status: 400, error: 'sub must be game:<slug>, type:<type> or all' };
}

const OPS = new Set(['subscribe', 'unsubscribe']);

/** Parses one command text. */
export function parseCommand(text: string): ParsedCommand {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return { ok: false, status: 400, error: 'A command is one JSON object' };
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v))
    return { ok: false, status: 400, error: 'A command is one JSON object' };
  const o = v as Record<string, unknown>;
  const op = typeof o.op === 'string' ? o.op : undefined;
  if (!op || !OPS.has(op)) return { ok: false, status: 400, error: 'op must be subscribe or unsubscribe' };
  if (typeof o.sub !== 'string') return { ok: false, status: 400, error: 'sub is required', op };
  const sel = parseSubscriptionName(o.sub);
  if (!sel.ok) return { ok: false, status: sel.status, error: sel.error, op, sub: o.sub };
  const sub = selectionLabel(sel.selection);
  if (op === 'unsubscribe') return { ok: true, command: { op, selection: sel.selection, sub } };
  for (const flag of ['latest', 'lifecycle'] as const)
    if (o[flag] !== undefined && typeof o[flag] !== 'boolean')
      return { ok: false, status: 400, error: `${flag} must be true or false`, op, sub };
  if (o.since !== undefined && o.since !== null && typeof o.since !== 'string')
    return { ok: false, status: 400, error: 'since must be a position text', op, sub };
  return {
    ok: true,
    command: {
      op: 'subscribe',
      selection: sel.selection,
      sub,
      since: typeof o.since === 'string' && o.since !== '' ? o.since : undefined,
      latest: o.latest === true,
      lifecycle: o.lifecycle === true,
    },
  };
}
