import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { checkBackwardCompatibility } from '../lib/log/schema-compat.ts';
import { GENERATED_FILE, generateTypes } from '../scripts/gen-types.ts';

const SCHEMAS = resolve(import.meta.dirname);
const temps: string[] = [];
afterEach(() => {
  for (const d of temps.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** A copy of schemas/ with a candidate next version of RoundFinished registered as id 99. */
function withNextVersion(mutate: (schema: { fields: unknown[] }) => void): string {
  const dir = mkdtempSync(join(tmpdir(), 'schemas-'));
  temps.push(dir);
  cpSync(SCHEMAS, dir, { recursive: true });
  const v1 = JSON.parse(readFileSync(join(dir, 'RoundFinished.v1.avsc'), 'utf8'));
  mutate(v1);
  writeFileSync(join(dir, 'RoundFinished.v99.avsc'), JSON.stringify(v1));
  const reg = JSON.parse(readFileSync(join(dir, 'registry.json'), 'utf8'));
  reg.schemas.push({
    id: 99,
    subject: 'rounds-value',
    name: 'casino.rounds.RoundFinished',
    version: 99,
    file: 'RoundFinished.v99.avsc',
  });
  writeFileSync(join(dir, 'registry.json'), JSON.stringify(reg));
  return dir;
}

describe('schema evolution', () => {
  it('the newest schema of every subject reads records written with every older version', () => {
    expect(checkBackwardCompatibility()).toEqual([]);
  });

  it('accepts a next version that adds a field with a default', () => {
    const dir = withNextVersion((s) => s.fields.push({ name: 'table_id', type: 'string', default: 'main' }));
    expect(checkBackwardCompatibility(dir)).toEqual([]);
  });

  it('rejects a next version that adds a field without a default', () => {
    const dir = withNextVersion((s) => s.fields.push({ name: 'table_id', type: 'string' }));
    const problems = checkBackwardCompatibility(dir);
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatchObject({ subject: 'rounds-value', writerId: 1, readerId: 99 });
  });

  it('rejects a next version that changes a field type incompatibly', () => {
    const dir = withNextVersion((s) => {
      const f = (s.fields as { name: string; type: unknown }[]).find((x) => x.name === 'game_slug');
      if (f) f.type = 'int';
    });
    expect(checkBackwardCompatibility(dir).map((p) => p.writerId)).toEqual([1]);
  });
});

describe('generated TypeScript', () => {
  it('schemas/generated/avro.ts is what scripts/gen-types.ts produces from the schemas (run npm run gen:types)', () => {
    expect(readFileSync(GENERATED_FILE, 'utf8')).toBe(generateTypes());
  });
});
