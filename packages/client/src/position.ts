/**
 * Reading a stream position (`t=<ms>;<slug>=<round id>…`, the server's lib/stream/position.ts):
 * the client only needs the round id it names per game, to see a round it has missed.
 */

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
