/**
 * The access routes keep their SQL in the stores of this folder (bets-store.ts, sessions-store.ts,
 * operators-store.ts), as the other services do: a file that registers routes runs no statement
 * of its own.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const DIR = import.meta.dirname;
const ROUTES = /\bapp\.(get|post|patch|put|delete)\b/;
/** A postgres.js tagged statement (`sql\`…\``, `sql<Row[]>\`…\``) or a transaction. */
const STATEMENT = /\bsql(<[^`]*?>)?`|\.begin\(|\.unsafe\(/;

describe('access routes', () => {
  it('register routes only in files without SQL', () => {
    const routeFiles = readdirSync(DIR).filter(
      (f) => f.endsWith('.ts') && !f.endsWith('.test.ts') && ROUTES.test(readFileSync(join(DIR, f), 'utf8')),
    );
    expect(routeFiles).toContain('bets.ts');
    const withSql = routeFiles.filter((f) => STATEMENT.test(readFileSync(join(DIR, f), 'utf8')));
    expect(withSql).toEqual([]);
  });
});
