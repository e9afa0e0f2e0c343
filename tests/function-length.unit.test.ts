/**
 * No function of lib/log or services/wallet-saga is longer than 120 lines, so a newcomer reads each
 * part of a log adapter (the batch loop, the commit step, the rebalance handling…) and of the money
 * path's dispatcher (the loop, the lease keeper, one send, the batched finish, waking, pulling
 * forward) on its own. Measured with the TypeScript compiler API: a function declaration, function
 * expression, arrow function or method, from its first line to its last, inclusive. lib/log's source
 * files; every .ts file of services/wallet-saga, tests included.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { ROOT } from './support/processes.ts';

const MAX_LINES = 120;

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

const FOLDERS: ReadonlyArray<{ dir: string; files: (f: string) => boolean; expect: string }> = [
  {
    dir: 'lib/log',
    files: (f) => f.endsWith('.ts') && !f.endsWith('.test.ts'),
    expect: 'checkpointed-consumer.ts',
  },
  { dir: 'services/wallet-saga', files: (f) => f.endsWith('.ts'), expect: 'dispatcher.ts' },
];

describe('function length', () => {
  it.each(FOLDERS)(`$dir has no function longer than ${MAX_LINES} lines`, ({ dir, files, expect: one }) => {
    const names = readdirSync(join(ROOT, dir)).filter(files);
    expect(names).toContain(one);
    const long = names.flatMap((f) =>
      functionLengths(join(ROOT, dir, f))
        .filter((x) => x.lines > MAX_LINES)
        .map((x) => `${dir}/${f}:${x.line} ${x.name} (${x.lines} lines)`),
    );
    expect(long).toEqual([]);
  });

  it('measures a function from its first line to its last', () => {
    const lines = functionLengths(join(ROOT, 'services/wallet-saga/send-order.ts'));
    // SendOrder.sent: from `sent(key: string): number {` to its closing brace.
    expect(lines.find((x) => x.name === 'sent')?.lines).toBe(5);
  });
});
