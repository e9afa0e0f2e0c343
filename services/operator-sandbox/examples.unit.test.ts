/**
 * The operator guide shows exactly the exchanges the code makes: docs/operators.md
 * holds what examples.ts renders (regenerate with `npx tsx scripts/operator-examples.ts --write`),
 * and every request in it matches its schema, every success answer its answer schema.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  callbackSchemas,
  requestSchemaOf,
  responseSchemaOf,
  type SchemaAction,
} from '../../lib/http/callback-schemas.ts';
import { ANSWER_PRESETS } from '../../rules/wallet/answers.ts';
import { renderExamples, session, spliceExamples } from './examples.ts';

const GUIDE = resolve(import.meta.dirname, '..', '..', 'docs', 'operators.md');

describe('docs/operators.md example exchanges', () => {
  it('are what the code makes (npx tsx scripts/operator-examples.ts --write)', () => {
    const doc = readFileSync(GUIDE, 'utf8');
    expect(doc.includes(renderExamples())).toBe(true);
    expect(spliceExamples(doc)).toBe(doc);
  });

  it.each(['A', 'B'] as const)('form %s: every request and success answer matches its schema', (form) => {
    const schemas = callbackSchemas();
    for (const { request, answers } of session(form)) {
      const action = (request.body.action ?? 'balance') as SchemaAction;
      expect(schemas.request(requestSchemaOf(action, form), request.body), request.webhookId).toEqual([]);
      for (const p of ANSWER_PRESETS) {
        const a = answers?.[p];
        if (a && a.status === 200 && 'old_balance' in a.body !== 'balance' in a.body)
          expect(
            schemas.response(responseSchemaOf(action, form), a.body),
            `${p} ${request.webhookId}`,
          ).toEqual([]);
      }
    }
  });
});
