/**
 * The floors of the tree (docs/architecture.md; DESIGN.md "Layout: three floors"), checked over the
 * import graph of every TypeScript file:
 * - rules/ is pure: it imports only rules/, the Node built-ins `node:crypto` and `node:util`
 *   (hashing and deep equality, no I/O), the generated contract types of schemas/generated (type
 *   only, erased at build), the data-only packages of PURE_DATA_PACKAGES, and, in its tests, vitest;
 * - lib/ imports rules/, schemas/ and packages, never a service;
 * - a service imports rules/, lib/, schemas/, proto/ and its own folder, never another service;
 * - source files (not tests) never import tests/ or bench/.
 * tests/ and bench/ sit above everything and may import any floor.
 */
import { readFileSync } from 'node:fs';
import { dirname, relative, resolve } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { ROOT } from './support/processes.ts';

const files = ts.sys
  .readDirectory(
    ROOT,
    ['.ts'],
    ['node_modules', '.cache', '.data', 'dist'],
    ['rules/**/*', 'lib/**/*', 'services/**/*'],
  )
  .map((f) => relative(ROOT, f));

interface Edge {
  readonly from: string;
  /** Repository path of a relative import, or the bare specifier of a package. */
  readonly to: string;
  readonly typeOnly: boolean;
}

const TYPE_ONLY = /^\s*(import|export)\s+type\s/;

function importsOf(file: string): Edge[] {
  const text = readFileSync(resolve(ROOT, file), 'utf8');
  const { importedFiles } = ts.preProcessFile(text, true, true);
  const lines = text.split('\n');
  return importedFiles.map(({ fileName, pos }) => {
    const line = lines[text.slice(0, pos).split('\n').length - 1] ?? '';
    // A multi-line `import type {` starts a few lines above `from`.
    const start = text.lastIndexOf('import', pos);
    const statement = text.slice(Math.max(0, start), pos);
    const to = fileName.startsWith('.') ? relative(ROOT, resolve(ROOT, dirname(file), fileName)) : fileName;
    return { from: file, to, typeOnly: TYPE_ONLY.test(line) || TYPE_ONLY.test(statement) };
  });
}

/**
 * Packages that are reference data and nothing else (no I/O, no clock, no state), which rules/ may
 * read: the ISO 4217 currency list of rules/money/currencies.ts.
 */
const PURE_DATA_PACKAGES: readonly string[] = ['fresh-currency-codes'];

const edges = files.flatMap(importsOf);
const isTest = (f: string) => /\.test\.ts$/.test(f);
const serviceOf = (p: string) => (p.startsWith('services/') ? p.split('/')[1] : undefined);

/** The rules of the floors; each returns the edges that break it as `from -> to`. */
const RULES: Record<string, (e: Edge) => boolean> = {
  'rules/ imports nothing outside itself but hashing, deep equality, contract types and reference data': (
    e,
  ) =>
    e.from.startsWith('rules/') &&
    !(
      e.to.startsWith('rules/') ||
      e.to === 'node:crypto' ||
      e.to === 'node:util' ||
      PURE_DATA_PACKAGES.includes(e.to) ||
      (e.to.startsWith('schemas/generated/') && e.typeOnly) ||
      (e.to === 'vitest' && isTest(e.from))
    ),
  'lib/ never imports a service': (e) => e.from.startsWith('lib/') && e.to.startsWith('services/'),
  'no service imports another service': (e) => {
    const from = serviceOf(e.from);
    const to = serviceOf(e.to);
    return from !== undefined && to !== undefined && from !== to;
  },
  'source files never import tests/ or bench/': (e) =>
    !isTest(e.from) && (e.to.startsWith('tests/') || e.to.startsWith('bench/')),
};

const broken = (rule: (e: Edge) => boolean, list: readonly Edge[]) =>
  list.filter(rule).map((e) => `${e.from} -> ${e.to}`);

describe('floors of the tree', () => {
  it('reads the files of every floor', () => {
    for (const floor of ['rules', 'lib', 'services'])
      expect(files.filter((f) => f.startsWith(`${floor}/`)).length).toBeGreaterThan(10);
  });

  for (const [name, rule] of Object.entries(RULES))
    it(name, () => {
      expect(broken(rule, edges)).toEqual([]);
    });

  it('each rule catches the arrow it forbids, and only that one', () => {
    const planted: Edge[] = [
      { from: 'rules/games/crash.ts', to: 'lib/config/core.ts', typeOnly: false },
      { from: 'rules/rounds/round.ts', to: 'schemas/generated/avro.ts', typeOnly: false },
      { from: 'lib/log/kafka.ts', to: 'services/api/app.ts', typeOnly: true },
      { from: 'services/edge/edge.ts', to: 'services/api/app.ts', typeOnly: false },
      { from: 'services/api/app.ts', to: 'tests/support/api.ts', typeOnly: false },
      { from: 'services/api/app.int.test.ts', to: 'tests/support/api.ts', typeOnly: false },
      { from: 'services/api/app.ts', to: 'services/api/errors.ts', typeOnly: false },
    ];
    expect(Object.values(RULES).map((rule) => broken(rule, planted))).toEqual([
      ['rules/games/crash.ts -> lib/config/core.ts', 'rules/rounds/round.ts -> schemas/generated/avro.ts'],
      ['lib/log/kafka.ts -> services/api/app.ts'],
      ['services/edge/edge.ts -> services/api/app.ts'],
      ['services/api/app.ts -> tests/support/api.ts'],
    ]);
  });

  it('tells a type-only import from a value import', () => {
    const own = importsOf('rules/rounds/round.ts').find((e) => e.to.startsWith('schemas/generated/'));
    expect(own?.typeOnly).toBe(true);
    const value = importsOf('lib/log/rounds-codec.ts').find((e) => e.to === 'lib/log/codec.ts');
    expect(value?.typeOnly).toBe(false);
  });
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
