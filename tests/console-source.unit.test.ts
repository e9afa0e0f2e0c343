/**
 * The console renders server text only as text nodes (console/README.md): no source file of
 * console/src sets HTML from a string, so an operator name or a callback body can never become markup.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const SRC = resolve(import.meta.dirname, '..', 'console', 'src');
const sources = readdirSync(SRC)
  .filter((f) => /\.tsx?$/.test(f) && !f.includes('.test.'))
  .map((f) => ({ file: f, text: readFileSync(join(SRC, f), 'utf8') }));

describe('console sources', () => {
  it('are found (main.tsx among them)', () => {
    expect(sources.map((s) => s.file)).toContain('main.tsx');
  });

  it('never set HTML from a string', () => {
    const offenders = sources
      .filter((s) =>
        /dangerouslySetInnerHTML|\.innerHTML\b|\.outerHTML\b|insertAdjacentHTML|document\.write/.test(s.text),
      )
      .map((s) => s.file);
    expect(offenders).toEqual([]);
  });

  it('load nothing from another origin', () => {
    const offenders = sources.filter((s) => /fetch\(\s*['"`]https?:/.test(s.text)).map((s) => s.file);
    expect(offenders).toEqual([]);
  });
});
