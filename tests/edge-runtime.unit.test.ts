/**
 * The edge runs with the Node flags of services/edge/runtime.ts wherever the project starts it:
 * `npm start` (scripts/start.sh) and the compose file's edge services (docker-compose.yml).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { EDGE_NODE_FLAGS } from '../services/edge/runtime.ts';

const ROOT = join(import.meta.dirname, '..');
const read = (f: string) => readFileSync(join(ROOT, f), 'utf8');

describe('the edge runtime flags', () => {
  it('are passed by scripts/start.sh', () => {
    const line = read('scripts/start.sh')
      .split('\n')
      .find((l) => l.includes('services/edge/main.ts'));
    expect(line).toBeDefined();
    for (const flag of EDGE_NODE_FLAGS) expect(line).toContain(`node ${flag}`);
  });

  it('are passed by every compose service that runs the edge', () => {
    const lines = read('docker-compose.yml')
      .split('\n')
      .filter((l) => l.includes('dist/services/edge/main.js'));
    expect(lines.length).toBeGreaterThan(0);
    for (const l of lines) for (const flag of EDGE_NODE_FLAGS) expect(l).toContain(`"${flag}"`);
  });
});
