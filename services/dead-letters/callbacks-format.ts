/**
 * How `dead-letters callbacks …` prints callbacks: a table (cli-table3, no colours: the output is
 * also piped to files) for `list` and `redrive`, and one callback as pretty JSON for `show`, its
 * last request and answer bodies parsed where they are JSON.
 */
import Table from 'cli-table3';
import { type CallbackDetail, type CallbackView, callbackJson } from '../../lib/db/wallet-callbacks.ts';

/** Unix ms to the second, ISO 8601 UTC. */
const at = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');

/** The status ops reason about: a due callback with attempts behind it is retrying. */
const statusOf = (c: CallbackView) => (c.status === 'due' && c.attempts > 0 ? 'retrying' : c.status);

const HEAD = [
  'tx_id',
  'kind',
  'operator',
  'player',
  'status',
  'attempts',
  'next attempt',
  'last answer/code',
  'updated',
];

/** Callbacks as a table with the columns of HEAD (the header alone when there are none). */
export function callbackTable(rows: readonly CallbackView[]): string {
  const t = new Table({
    head: HEAD,
    // No line between rows (a listing can be long), no colours.
    chars: { mid: '', 'left-mid': '', 'mid-mid': '', 'right-mid': '' },
    style: { head: [], border: [] },
  });
  for (const c of rows)
    t.push([
      String(c.tx_id),
      c.kind,
      c.operator_id,
      c.user_id,
      statusOf(c),
      String(c.attempts),
      c.status === 'due' ? at(c.next_attempt_at) : '-',
      [c.last_answer ?? '-', c.last_code ?? ''].join(' ').trim(),
      at(c.updated_at),
    ]);
  return t.toString();
}

/** A JSON text, parsed; anything else (an excerpt cut short, plain text) as it is. */
function parsed(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/**
 * One callback as pretty JSON: every field, times ISO 8601, `last_request` parsed, `last_response`
 * (`HTTP <status> <body>` as the dispatcher stores it) as `{http_status, body}` with the body parsed.
 */
export function showCallback(c: CallbackDetail): string {
  const answer = c.last_response === null ? null : /^HTTP (\d{3}) ([\s\S]*)$/.exec(c.last_response);
  return JSON.stringify(
    {
      ...callbackJson(c),
      last_request: c.last_request === null ? null : parsed(c.last_request),
      last_response: answer
        ? { http_status: Number(answer[1]), body: parsed(answer[2] as string) }
        : c.last_response,
    },
    null,
    2,
  );
}
