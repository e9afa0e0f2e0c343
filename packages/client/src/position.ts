/**
 * Reading a stream position (`t=<ms>;<slug>=<round id>…`, the server's lib/stream/position.ts):
 * the client needs the round id it names per game, to see a round it has missed, and whether a
 * text has a position's form at all, so that it never keeps something else as one.
 */

/** `t=<ms>` then `;<game>=<round id>` pairs: up to 15 digits each, at most 256 characters (the server's limits). */
const FORM = /^t=\d{1,15}(;[a-z0-9][a-z0-9-]*=\d{1,15})*$/;

/**
 * Whether `text` has the form of a stream position. Whether the server takes it (its games
 * belong to the subscription, its time is not ahead) only the server says.
 */
export function isPosition(text: string | undefined): text is string {
  return text !== undefined && text.length <= 256 && FORM.test(text);
}

/** Round id per game named by `position` (an unreadable text names none). */
export function roundsOf(position: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const pair of position.split(';').slice(1)) {
    const eq = pair.indexOf('=');
    const n = Number(pair.slice(eq + 1));
    if (eq > 0 && Number.isSafeInteger(n)) out.set(pair.slice(0, eq), n);
  }
  return out;
}
