/**
 * Newline-delimited JSON on WebTransport streams: the client's commands in, the
 * server's reliable messages out. A line is one JSON text; a line longer than the limit is an
 * error that ends the reading (the same bound as a WebSocket command frame).
 */
import type { TlvReader } from './h3/reader.ts';

const decoder = new TextDecoder();

/**
 * Calls `onLine` with each line of `reader` (without its newline) until the stream ends.
 * @throws Error when a line is longer than `maxLine` bytes, or the stream fails.
 */
export async function readLines(
  reader: Pick<TlvReader, 'bytes'>,
  maxLine: number,
  onLine: (line: string) => void | Promise<void>,
): Promise<void> {
  let pending = '';
  for (;;) {
    const chunk = await reader.bytes();
    if (chunk === undefined) break;
    pending += decoder.decode(chunk, { stream: true });
    let nl = pending.indexOf('\n');
    while (nl >= 0) {
      const line = pending.slice(0, nl).trim();
      pending = pending.slice(nl + 1);
      if (line !== '') await onLine(line);
      nl = pending.indexOf('\n');
    }
    if (pending.length > maxLine) throw new Error(`a line longer than ${maxLine} bytes`);
  }
  if (pending.trim() !== '') await onLine(pending.trim());
}
