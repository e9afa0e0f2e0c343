/**
 * The access routes keep their SQL in the stores of this folder (bets-store.ts, sessions-store.ts,
 * operators-store.ts), as the other services do: a file that registers routes runs no statement
 * of its own. The operator portal's routes (../portal) follow the same rule.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const DIR = import.meta.dirname;
const ROUTES = /\bapp\.(get|post|patch|put|delete)\b/;
/** A postgres.js tagged statement (`sql\`…\``, `sql<Row[]>\`…\``) or a transaction. */
const STATEMENT = /\bsql(<[^`]*?>)?`|\.begin\(|\.unsafe\(/;

/** The files of `dir` that register routes, and those of them that run SQL. */
function routeFilesOf(dir: string) {
  const routeFiles = readdirSync(dir).filter(
    (f) => f.endsWith('.ts') && !f.endsWith('.test.ts') && ROUTES.test(readFileSync(join(dir, f), 'utf8')),
  );
  const withSql = routeFiles.filter((f) => STATEMENT.test(readFileSync(join(dir, f), 'utf8')));
  return { routeFiles, withSql };
}

describe('access routes', () => {
  it('register routes only in files without SQL', () => {
    const { routeFiles, withSql } = routeFilesOf(DIR);
    expect(routeFiles).toContain('bets.ts');
    expect(withSql).toEqual([]);
  });

  it('and so do the operator portal routes', () => {
    const { routeFiles, withSql } = routeFilesOf(join(DIR, '../portal'));
    expect(routeFiles).toContain('callbacks.ts');
    expect(withSql).toEqual([]);
  });
});
