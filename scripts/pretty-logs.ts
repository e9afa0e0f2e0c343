/**
 * The log formatter of `npm start` when its output is a terminal (scripts/start.sh pipes the
 * services' output through it then; to a file or a CI log the lines stay JSON). Reads concurrently's
 * lines, `[service] {pino JSON}`, on stdin and writes each as its prefix followed by pino-pretty's
 * one-line text (time, level, message, the other fields); any other line passes as it is.
 *
 * Run: node scripts/pretty-logs.ts. Ends when its input ends. A terminal's Ctrl-C reaches it as it
 * reaches start.sh; it ignores SIGINT and SIGTERM so that the services' stop messages, which come
 * after, are still shown (and the services never write to a closed pipe).
 */
import { createInterface } from 'node:readline';
import { pathToFileURL } from 'node:url';
import { prettyFactory } from 'pino-pretty';

/** One line of concurrently's output: the prefix (colours included) and a pino JSON object. */
const PREFIXED_JSON = /^(.*?\]\S* )(\{".*\})\s*$/;

/**
 * A formatter of one output line: a `[service] {json}` line whose JSON is a pino record (has a
 * numeric `level`) becomes the prefix plus pino-pretty's text; anything else comes back unchanged.
 * @param colorize ANSI colours for levels (true on a terminal)
 */
export function createLineFormatter(colorize: boolean): (line: string) => string {
  const pretty = prettyFactory({
    colorize,
    singleLine: true,
    translateTime: 'SYS:HH:MM:ss.l',
    ignore: 'pid,hostname,service',
  });
  return (line) => {
    const m = PREFIXED_JSON.exec(line);
    if (!m) return line;
    let record: unknown;
    try {
      record = JSON.parse(m[2] as string);
    } catch {
      return line;
    }
    if (
      typeof record !== 'object' ||
      record === null ||
      typeof (record as { level?: unknown }).level !== 'number'
    )
      return line;
    return `${m[1]}${pretty(record).trimEnd()}`;
  };
}

function main(): void {
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => {});
  const format = createLineFormatter(process.stdout.isTTY === true && !process.env.NO_COLOR);
  const lines = createInterface({ input: process.stdin, crlfDelay: Number.POSITIVE_INFINITY });
  lines.on('line', (line) => process.stdout.write(`${format(line)}\n`));
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) main();
