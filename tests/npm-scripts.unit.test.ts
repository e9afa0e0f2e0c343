/**
 * Every `npm run` entry point runs on the project's Node 24, whichever node started npm: each
 * script of package.json goes through scripts/run.sh (scripts/node-env.sh, then the command), and a
 * tool script started from an npm on Node 20 (the pinned baseline of scripts/node-env.sh) runs on 24.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from './support/processes.ts';

const scripts = (
  JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }
).scripts;

/** The folder of a Node 20 (scripts/node-env.sh's use_node_version: the one on PATH or the pinned build). */
function node20Bin(): string {
  return execFileSync(
    'bash',
    ['-c', 'source scripts/_common.sh && source scripts/node-env.sh && use_node_version 20.20.2'],
    { cwd: ROOT, encoding: 'utf8', timeout: 600_000 },
  ).trim();
}

describe('npm run scripts', () => {
  it('each goes through scripts/run.sh (postinstall is npm install’s own hook)', () => {
    const direct = Object.entries(scripts)
      .filter(([name, cmd]) => name !== 'postinstall' && !cmd.startsWith('bash scripts/run.sh '))
      .map(([name, cmd]) => `${name}: ${cmd}`);
    expect(direct).toEqual([]);
  });

  it('runs a tool script on Node 24 when npm and the node first on PATH are Node 20', () => {
    const bin = node20Bin();
    // npm itself from the system (any version), after Node 20's folder; no Node 24 folder on PATH.
    const rest = (process.env.PATH ?? '')
      .split(delimiter)
      .filter((d) => !d.includes(`${join('.cache', 'node')}`));
    const path = [bin, ...rest].join(delimiter);
    expect(
      execFileSync('node', ['--version'], { env: { ...process.env, PATH: path }, encoding: 'utf8' }),
    ).toMatch(/^v20\./);
    // Printed by the tool's own process (argv[1] is the script), before its --help.
    const probe = encodeURIComponent(
      'if(process.argv[1]?.endsWith("dead-letters.ts"))console.error("tool-node:"+process.version)',
    );
    const r = spawnSync('npm', ['run', '-s', 'dead-letters', '--', '--help'], {
      cwd: ROOT,
      env: { ...process.env, PATH: path, NODE_OPTIONS: `--import=data:text/javascript,${probe}` },
      encoding: 'utf8',
      timeout: 120_000,
    });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toContain('Usage: dead-letters');
    expect(r.stderr).toMatch(/tool-node:v24\./);
  }, 180_000);
});
