/**
 * Every error class of the platform extends AppError (rules/errors.ts; docs/conventions.md §6):
 * a stable string code, a cause and a retryable flag. The client library (packages/client) is
 * published on its own and imports nothing of the platform, so its errors are outside this rule.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from './support/processes.ts';

const FLOORS = ['rules', 'lib', 'services'];

function sources(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts') && !f.includes('node_modules'))
    .map((f) => join(dir, f));
}

describe('error classes', () => {
  it('extend AppError, never Error directly (AppError itself aside)', () => {
    const direct: string[] = [];
    for (const floor of FLOORS) {
      for (const file of sources(join(ROOT, floor))) {
        for (const m of readFileSync(file, 'utf8').matchAll(/class (\w+) extends Error\b/g)) {
          if (m[1] !== 'AppError') direct.push(`${relative(ROOT, file)}: ${m[1]}`);
        }
      }
    }
    expect(direct).toEqual([]);
  });
});
