/**
 * The architecture of the tree (docs/architecture.md "Layout"), checked by dependency-cruiser with
 * the rules of .dependency-cruiser.cjs over every import of rules/, lib/, services/ and packages/:
 * rules/ is pure (only itself, hashing, deep equality, contract types as types, reference data, and
 * vitest in its tests); lib/ never imports a service; no service imports another; source files never
 * import tests/ or bench/; no circular imports. And the writer of every table is documented.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { cruise, type ICruiseResult } from 'dependency-cruiser';
import extractDepcruiseOptions from 'dependency-cruiser/config-utl/extract-depcruise-options';
import extractTSConfig from 'dependency-cruiser/config-utl/extract-ts-config';
import ts from 'typescript';
import { beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from './support/processes.ts';

const CONFIG = resolve(ROOT, '.dependency-cruiser.cjs');

/** Runs dependency-cruiser over `paths` (relative to `base`, the repository by default) with the project's rules. */
async function cruiseTree(paths: string[], base = ROOT): Promise<ICruiseResult> {
  const cwd = process.cwd();
  process.chdir(base);
  try {
    const options = await extractDepcruiseOptions(CONFIG);
    const tsConfig = base === ROOT ? extractTSConfig(resolve(ROOT, 'tsconfig.json')) : undefined;
    // The fixture tree of the planted arrows has no tsconfig.json of its own.
    const { tsConfig: _own, ...plain } = options;
    const reported = tsConfig
      ? await cruise(paths, { ...options, validate: true }, {}, { tsConfig })
      : await cruise(paths, { ...plain, validate: true });
    return reported.output as ICruiseResult;
  } finally {
    process.chdir(cwd);
  }
}

/** `rule: from -> to` for each violation. */
const violations = (r: ICruiseResult) =>
  r.summary.violations.map((v) =>
    v.cycle?.length
      ? `${v.rule.name}: ${[v.from, ...v.cycle.map((c) => c.name)].join(' -> ')}`
      : `${v.rule.name}: ${v.from} -> ${v.to}`,
  );

describe('architecture rules (dependency-cruiser)', () => {
  let result: ICruiseResult;
  beforeAll(async () => {
    result = await cruiseTree(['rules', 'lib', 'services', 'packages']);
  }, 120_000);

  it('reads the files of every floor', () => {
    for (const floor of ['rules', 'lib', 'services'])
      expect(result.modules.filter((m) => m.source.startsWith(`${floor}/`)).length).toBeGreaterThan(10);
  });

  it('finds no violation: floors, services apart, sources apart from tests, no circles', () => {
    expect(violations(result)).toEqual([]);
  });

  it('each rule catches the arrow it forbids', async () => {
    // A small tree with one forbidden arrow of each kind, in a folder of its own.
    const base = mkdtempSync(join(tmpdir(), 'arch-'));
    const files: Record<string, string> = {
      'rules/pure.ts': "import { x } from '../lib/adapter.ts';\nexport const y = x;\n",
      'rules/typed.ts': "import { T } from '../schemas/generated/avro.ts';\nexport const z = T;\n",
      'schemas/generated/avro.ts': 'export const T = 1;\n',
      'lib/adapter.ts': "import { a } from '../services/one/app.ts';\nexport const x = a;\n",
      'services/one/app.ts':
        "import { b } from '../two/app.ts';\nimport { h } from '../../tests/support/h.ts';\nexport const a = b + h;\n",
      'services/two/app.ts': 'export const b = 1;\n',
      'tests/support/h.ts': 'export const h = 1;\n',
      'lib/ring-a.ts': "import { rb } from './ring-b.ts';\nexport const ra = () => rb;\n",
      'lib/ring-b.ts': "import { ra } from './ring-a.ts';\nexport const rb = () => ra;\n",
    };
    for (const [f, text] of Object.entries(files)) {
      mkdirSync(dirname(join(base, f)), { recursive: true });
      writeFileSync(join(base, f), text);
    }
    const planted = await cruiseTree(['rules', 'lib', 'services'], base);
    rmSync(base, { recursive: true, force: true });
    expect(new Set(planted.summary.violations.map((v) => v.rule.name))).toEqual(
      new Set([
        'rules-are-pure',
        'rules-contract-types-only',
        'lib-never-imports-a-service',
        'no-service-imports-another',
        'sources-never-import-tests-or-bench',
        'no-circular',
      ]),
    );
  }, 120_000);
});

describe('tables and their writers', () => {
  const dir = resolve(ROOT, 'lib/db/migrations');
  const migrations = ts.sys.readDirectory(dir, ['.sql']).map((f) => readFileSync(f, 'utf8'));
  const tables = migrations.flatMap((sql) =>
    [...sql.matchAll(/create table (\w+)/g)].map((m) => m[1] as string),
  );
  const doc = readFileSync(resolve(ROOT, 'docs/architecture.md'), 'utf8');
  const section = doc.slice(doc.indexOf('## Tables and their writers'));

  it('finds the tables of the migrations', () => {
    expect(tables).toContain('rounds');
    expect(tables.length).toBeGreaterThan(10);
  });

  it('names the writer of every table in its migration header and in docs/architecture.md', () => {
    const owners = migrations.map((sql) =>
      sql
        .split('\n')
        .filter((l) => l.startsWith('--'))
        .join('\n'),
    );
    const undocumented = tables.filter(
      (t) =>
        !owners.some((h) => /Owners?:/.test(h) && new RegExp(`\\b${t}\\b`).test(h)) ||
        !new RegExp(`\`${t}\``).test(section),
    );
    expect(undocumented).toEqual([]);
  });
});
