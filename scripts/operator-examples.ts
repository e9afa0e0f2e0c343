/**
 * `npx tsx scripts/operator-examples.ts [--write]`: the example exchanges of docs/operators.md
 * (services/operator-sandbox/examples.ts: the saga's requests and the sandbox's answers under each
 * preset). Prints them; --write puts them into the guide between its markers.
 * services/operator-sandbox/examples.unit.test.ts fails when the guide differs.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { renderExamples, spliceExamples } from '../services/operator-sandbox/examples.ts';

const GUIDE = resolve(import.meta.dirname, '..', 'docs', 'operators.md');

if (process.argv.includes('--write')) {
  writeFileSync(GUIDE, spliceExamples(readFileSync(GUIDE, 'utf8')));
  process.stdout.write(`wrote the example exchanges into ${GUIDE}\n`);
} else {
  process.stdout.write(`${renderExamples()}\n`);
}
