/**
 * The architecture of the tree as dependency-cruiser rules (docs/architecture.md "Layout"), checked
 * in `npm test` by tests/architecture.unit.test.ts and by hand with
 * `npx depcruise --config .dependency-cruiser.cjs rules lib services packages`:
 * - rules/ is pure: rules/, `node:crypto` and `node:util` (hashing, deep equality: no I/O), the generated
 *   contract types of schemas/generated (type only), reference-data packages, and vitest in its tests;
 * - lib/ never imports a service;
 * - no service imports another service;
 * - source files never import tests/ or bench/;
 * - no circular imports.
 */
/** Packages that are reference data and nothing else (no I/O, no clock, no state): the ISO 4217 list. */
const PURE_DATA_PACKAGES = ['fresh-currency-codes'];

module.exports = {
  forbidden: [
    {
      name: 'rules-are-pure',
      comment:
        'rules/ imports nothing outside itself but hashing, deep equality, contract types (type only) and reference data.',
      severity: 'error',
      from: { path: '^rules/' },
      to: {
        pathNot: [
          '^rules/',
          '^node:(crypto|util)$',
          '^(crypto|util)$',
          `^node_modules/(${PURE_DATA_PACKAGES.join('|')})/`,
          '^schemas/generated/',
          '^node_modules/vitest/',
          '^node_modules/@vitest/',
        ],
      },
    },
    {
      name: 'rules-contract-types-only',
      comment: 'rules/ may read the generated contract types, erased at build: type-only imports.',
      severity: 'error',
      from: { path: '^rules/' },
      to: { path: '^schemas/generated/', dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'rules-vitest-only-in-tests',
      severity: 'error',
      from: { path: '^rules/', pathNot: '[.]test[.]ts$' },
      to: { path: '^node_modules/(@vitest|vitest)/' },
    },
    {
      name: 'lib-never-imports-a-service',
      severity: 'error',
      from: { path: '^lib/' },
      to: { path: '^services/' },
    },
    {
      name: 'no-service-imports-another',
      severity: 'error',
      from: { path: '^services/([^/]+)/' },
      to: { path: '^services/([^/]+)/', pathNot: '^services/$1/' },
    },
    {
      name: 'sources-never-import-tests-or-bench',
      severity: 'error',
      from: { path: '^(rules|lib|services|packages)/', pathNot: '[.]test[.]ts$' },
      to: { path: '^(tests|bench)/' },
    },
    {
      name: 'no-circular',
      comment: 'A circle of imports: one module of it belongs in another, or a shared piece is missing.',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '(^|/)(node_modules|dist|[.]cache|[.]data)/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default'],
    },
  },
};
