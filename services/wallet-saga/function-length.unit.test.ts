/**
 * No function of services/wallet-saga is longer than 120 lines, so a reader of the money path reads
 * each part of the dispatcher (the loop, the lease keeper, one send, the batched finish, waking,
 * pulling forward) on its own. Measured with the TypeScript compiler API: a function declaration,
 * function expression, arrow function or method, from its first line to its last, inclusive. Every
 * .ts file of the folder, tests included.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const MAX_LINES = 120;
const dir = import.meta.dirname;

/** Every function-like node of `file` with its length in lines (first to last line, inclusive). */
function functionLengths(file: string): Array<{ name: string; line: number; lines: number }> {
  const text = readFileSync(file, 'utf8');
  const src = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const out: Array<{ name: string; line: number; lines: number }> = [];
  const visit = (node: ts.Node) => {
    if (
      ts.isFunctionDeclaration(node) ||
      ts.isFunctionExpression(node) ||
      ts.isArrowFunction(node) ||
      ts.isMethodDeclaration(node)
    ) {
      const start = src.getLineAndCharacterOfPosition(node.getStart(src)).line;
      const end = src.getLineAndCharacterOfPosition(node.getEnd()).line;
      const name = node.name && ts.isIdentifier(node.name) ? node.name.text : '(anonymous)';
      out.push({ name, line: start + 1, lines: end - start + 1 });
    }
    ts.forEachChild(node, visit);
  };
  visit(src);
  return out;
}

describe('services/wallet-saga function length', () => {
  it(`has no function longer than ${MAX_LINES} lines`, () => {
    const files = readdirSync(dir).filter((f) => f.endsWith('.ts'));
    expect(files).toContain('dispatcher.ts');
    const long = files.flatMap((f) =>
      functionLengths(join(dir, f))
        .filter((x) => x.lines > MAX_LINES)
        .map((x) => `${f}:${x.line} ${x.name} (${x.lines} lines)`),
    );
    expect(long).toEqual([]);
  });

  it('measures a function from its first line to its last', () => {
    const lines = functionLengths(join(dir, 'send-order.ts'));
    // SendOrder.sent: from `sent(key: string): number {` to its closing brace.
    expect(lines.find((x) => x.name === 'sent')?.lines).toBe(5);
  });
});
