/**
 * The install step of scripts/uws-glibc.ts on the package as npm serves it: the locked
 * tarball of `uWebSockets.js` (checked against the lock's integrity) is unpacked afresh, its binary
 * for this Node is refused by this host's glibc when that is older than the binary wants, and after
 * the rebinding it loads in a new Node process and echoes a WebSocket message.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { compareGlibc, readGlibcNeeds, rebindForGlibc } from '../scripts/uws-glibc.ts';
import { ROOT } from './support/processes.ts';

const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as {
  packages: Record<string, { version: string; integrity: string; name?: string }>;
};
const locked = lock.packages['node_modules/uWebSockets.js'];
const host = (process.report.getReport() as { header: { glibcVersionRuntime?: string } }).header
  .glibcVersionRuntime;
const work = mkdtempSync(join(tmpdir(), 'casino-uws-'));

afterAll(() => rmSync(work, { recursive: true, force: true }));

/** Runs `script` in a new process of this Node; resolves its stdout. @throws with its stderr. */
function runNode(script: string): string {
  return execFileSync(process.execPath, ['-e', script], {
    cwd: ROOT,
    encoding: 'utf8',
    timeout: 30_000,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

/** Echo through a uWebSockets.js app loaded from `dir` and a `ws` client; prints the echo. */
const ECHO = (dir: string) => `
  const uws = require(${JSON.stringify(dir)});
  const WebSocket = require('ws');
  uws.App().ws('/*', { message: (s, m) => s.send(m) }).listen('127.0.0.1', 0, (token) => {
    const c = new WebSocket('ws://127.0.0.1:' + uws.us_socket_local_port(token) + '/');
    c.on('open', () => c.send('round'));
    c.on('message', (m) => { console.log('echo:' + m); process.exit(0); });
  });
  setTimeout(() => process.exit(2), 10000);
`;

describe.skipIf(process.platform !== 'linux' || !host)(
  'uWebSockets.js on this glibc (scripts/uws-glibc.ts)',
  () => {
    it('loads the locked package after the rebinding, and serves', () => {
      expect(locked?.name, 'uWebSockets.js in package-lock.json, an npm: alias').toBeDefined();
      const spec = `${locked?.name}@${locked?.version}`;
      const tgz = execFileSync('npm', ['pack', '--silent', '--prefer-offline', spec], {
        cwd: work,
        encoding: 'utf8',
        timeout: 120_000,
      }).trim();
      const integrity = `sha512-${createHash('sha512')
        .update(readFileSync(join(work, tgz)))
        .digest('base64')}`;
      expect(integrity, 'the tarball the lock pins').toBe(locked?.integrity);
      const dir = join(work, 'uws');
      mkdirSync(dir);
      execFileSync('tar', ['-xzf', join(work, tgz), '-C', dir, '--strip-components=1']);
      const binary = join(dir, `uws_linux_${process.arch}_${process.versions.modules}.node`);
      expect(readdirSync(dir)).toContain(binary.slice(dir.length + 1));

      const official = readFileSync(binary);
      const newest = readGlibcNeeds(official)
        .needs.map((n) => n.version)
        .sort(compareGlibc)
        .at(-1) as string;
      const rebound = rebindForGlibc(official, host as string);
      if (compareGlibc(newest, host as string) > 0) {
        expect(() => runNode(`require(${JSON.stringify(dir)})`)).toThrow(new RegExp(`GLIBC_${newest}`));
        expect(rebound, 'the rebinding changes the binary').toBeDefined();
        writeFileSync(binary, rebound as Buffer);
        expect(rebindForGlibc(rebound as Buffer, host as string), 'idempotent').toBeUndefined();
        const after = readGlibcNeeds(rebound as Buffer);
        const weak = after.needs.filter((n) => compareGlibc(n.version, host as string) > 0);
        expect(weak.every((n) => n.weak && (after.symbols.get(n.index) ?? []).length === 0)).toBe(true);
      } else {
        expect(rebound, 'nothing to do on this glibc').toBeUndefined();
      }
      expect(runNode(ECHO(dir)).trim()).toBe('echo:round');
    }, 180_000);
  },
);
