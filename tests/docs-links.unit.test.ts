/**
 * Docs that cannot rot silently: every repository path that README.md or a page of docs/ names
 * (in backticks or as a link) exists, and every citation of a document section in the repository's
 * files — `docs/<page>.md "<Section>"`, or `"<Section> / <Subsection>"` — names a page that exists
 * and headings that it has. A path with a placeholder (`<name>`, `*`, `…`) is a pattern, not a path;
 * a git-ignored path (a folder the tools write, e.g. bench/results/) is made at run time.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from './support/processes.ts';

const TOP = [
  'lib/',
  'rules/',
  'services/',
  'tests/',
  'scripts/',
  'schemas/',
  'proto/',
  'public/',
  'ops/',
  'bench/',
  'docs/',
  'packages/',
  'patches/',
];

const git = (...args: string[]) => execFileSync('git', args, { cwd: ROOT, encoding: 'utf8' });
const tracked = git('ls-files').split('\n').filter(Boolean);
const pages = tracked.filter((f) => f === 'README.md' || (f.startsWith('docs/') && f.endsWith('.md')));

/** Whether git ignores `path` (output the tools write); such paths need not exist in a clone. */
function ignored(path: string): boolean {
  try {
    git('check-ignore', '-q', path);
    return true;
  } catch {
    return false;
  }
}

/** The repository paths a markdown page names: backticked tokens and link targets, resolved. */
function pathsOf(page: string): string[] {
  const text = readFileSync(join(ROOT, page), 'utf8');
  const out: string[] = [];
  for (const m of text.matchAll(/`([^`\s]+)`|\]\(([^)\s]+)\)/g)) {
    const link = m[2];
    let p = (m[1] ?? link ?? '').split('#')[0] as string;
    p = p.replace(/[.,;:)]+$/, '').replace(/:\d+(-\d+)?$/, '');
    if (!p || /[<*{}…$[\]]/.test(p) || p.includes('...') || /^[a-z]+:\/\//.test(p)) continue;
    if (link && !TOP.some((t) => p.startsWith(t))) p = normalize(join(dirname(page), p));
    if (TOP.some((t) => p.startsWith(t)) || (link && !p.startsWith('..'))) out.push(p);
  }
  return out;
}

/** The anchors of a markdown page, lower-cased: its headings and the bold lead-ins of list items. */
function headingsOf(page: string): string[] {
  return readFileSync(join(ROOT, page), 'utf8')
    .split('\n')
    .filter((l) => /^#{1,6} /.test(l) || /^\s*- \*\*/.test(l))
    .map((l) =>
      l
        .replace(/^#+ /, '')
        .replace(/^\s*- \*\*([^*]+)\*\*.*$/, '$1')
        .toLowerCase(),
    );
}

describe('docs name only what exists', () => {
  it.each(pages)('%s: every path it names exists', (page) => {
    const missing = [...new Set(pathsOf(page))].filter((p) => !existsSync(join(ROOT, p)) && !ignored(p));
    expect(missing).toEqual([]);
  });

  it('every cited document section exists', () => {
    const sources = tracked.filter(
      (f) => /\.(ts|sh|md|proto|sql|avsc|json|yml|html)$/.test(f) && !f.includes('package-lock'),
    );
    const bad: string[] = [];
    let cited = 0;
    for (const f of sources) {
      const text = readFileSync(join(ROOT, f), 'utf8');
      for (const m of text.matchAll(/(docs\/[a-z0-9/-]+\.md),? "([^"\n]+)"/g)) {
        const [, page, section] = m as unknown as [string, string, string];
        cited++;
        if (!existsSync(join(ROOT, page))) {
          bad.push(`${f}: ${page} does not exist`);
          continue;
        }
        const heads = headingsOf(page);
        let from = 0;
        for (const part of section.split(' / ').map((s) => s.toLowerCase())) {
          const at = heads.findIndex((h, i) => i >= from && h.includes(part));
          if (at < 0) {
            bad.push(`${f}: ${page} has no section "${section}"`);
            break;
          }
          from = at;
        }
      }
    }
    expect(cited).toBeGreaterThan(10);
    expect(bad).toEqual([]);
  });
});
