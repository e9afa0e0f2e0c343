/**
 * scripts/pretty-logs.ts, the formatter npm start pipes the services' output through on a terminal:
 * concurrently's `[service] {pino JSON}` lines become the prefix and pino-pretty's one-line text;
 * every other line is left alone. Also run as the child process start.sh makes of it.
 */
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { createLineFormatter } from '../scripts/pretty-logs.ts';
import { ROOT } from './support/processes.ts';

const record = {
  level: 30,
  time: Date.UTC(2026, 0, 2, 3, 4, 5, 678),
  pid: 1,
  hostname: 'h',
  service: 'api',
  component: 'round-phases',
  msg: 'following round phases',
};

describe('the npm start log formatter', () => {
  const format = createLineFormatter(false);
  it('shows a pino line as time, level, message and the other fields after its prefix', () => {
    const out = format(`[api] ${JSON.stringify(record)}`);
    expect(out).toMatch(
      /^\[api\] \[\d\d:\d\d:\d\d\.678\] INFO: following round phases \{"component":"round-phases"\}$/,
    );
  });
  it('keeps a coloured prefix and names the error level', () => {
    const out = format(
      `\x1b[34m[round-engine]\x1b[39m ${JSON.stringify({ ...record, level: 50, msg: 'boom' })}`,
    );
    const prefix = '\x1b[34m[round-engine]\x1b[39m ';
    expect(out.startsWith(prefix)).toBe(true);
    expect(out.slice(prefix.length)).toMatch(/^\[[\d:.]+\] ERROR: boom/);
  });
  it('passes other lines as they are', () => {
    for (const line of [
      '[api] First admin key (shown once, store it now): sk_live_x',
      '[api] {"not":"pino"}',
      '[api] {broken json}',
      '[edge] exited with code 0',
      '',
    ])
      expect(format(line)).toBe(line);
  });
  it('formats its input line by line as a child process, to the end of its input', () => {
    const input = `[api] ${JSON.stringify(record)}\n[bots] plain text\n`;
    const r = spawnSync(process.execPath, ['scripts/pretty-logs.ts'], { cwd: ROOT, input, encoding: 'utf8' });
    expect(r.status, r.stderr).toBe(0);
    const lines = r.stdout.split('\n');
    expect(lines[0]).toMatch(/^\[api\] \[[\d:.]+\] INFO: following round phases/);
    expect(lines.slice(1)).toEqual(['[bots] plain text', '']);
  });
});
