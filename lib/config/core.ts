/**
 * The configuration core (docs/conventions.md §5): every service declares its settings as sections (a zod
 * shape over environment variable names plus a function that builds the typed part), and loads the
 * sections it needs once at start-up. The result is validated, frozen and passed down explicitly;
 * no other module reads `process.env`.
 *
 * A malformed setting, or an unknown one under a prefix that a loaded section owns (a typo such as
 * `EDGE_WS_IDLE_TIMOUT_S` while the edge section owns `EDGE_`), stops the process with a
 * ConfigError naming each. Settings under prefixes no loaded section owns belong to other services
 * and are ignored, so one environment can serve every process of `npm start`.
 */
import { resolve } from 'node:path';
import { type ZodType, z } from 'zod';
import { ConfigError } from '../errors.ts';

/** The repository (or built app) root: defaults of data paths (.data/, public/) hang off it. */
export const APP_ROOT = resolve(import.meta.dirname as string, '..', '..');

/** An integer setting in [min, max], given as text. */
export const int = (min: number, max: number) => z.coerce.number().int().min(min).max(max);

/** A TCP port; 0 = any free port. */
export const port = int(0, 65535);

/** A comma-separated list of non-empty items. */
export const csv = z
  .string()
  .transform((s) => s.split(',').map((p) => p.trim()))
  .pipe(z.array(z.string().min(1)).min(1));

/** `true`/`false`/`1`/`0`. */
export const bool = z.enum(['true', 'false', '1', '0']).transform((v) => v === 'true' || v === '1');

/** An http(s) origin without path (a path or query would be silently dropped). */
export const originUrl = z
  .string()
  .regex(/^https?:\/\/[^/?#\s]+\/?$/, 'an http(s)://host:port origin without path');

/** A Postgres schema name, spliced into DDL and search_path. */
export const sqlIdentifier = z.string().regex(/^[a-z_][a-z0-9_]{0,62}$/, 'a lower-case SQL identifier');

/** A non-empty host name or address. */
export const host = z.string().min(1);

/** A path under the app root's `.data/` by default. */
export const dataPath = (...parts: string[]) =>
  z
    .string()
    .min(1)
    .default(resolve(APP_ROOT, '.data', ...parts));

/** `http://host:port` of a local listener; a wildcard bind address is reached over loopback. */
export function localOrigin(h: string, p: number): string {
  const local = h === '0.0.0.0' || h === '::' ? '127.0.0.1' : h;
  return `http://${local.includes(':') ? `[${local}]` : local}:${p}`;
}

/** A shape of settings: environment variable name → its zod schema (with its default). */
export type Shape = Record<string, ZodType>;

/** One section of a service's configuration. */
export interface Section<N extends string, S extends Shape, T> {
  /** Key of the built part in the loaded config (`kafka`, `edge`, …). */
  readonly name: N;
  /** Variable prefixes this section owns: an unknown variable under one of them is an error. */
  readonly prefixes: readonly string[];
  readonly shape: S;
  /** Builds the typed part from the validated values; may throw ConfigError for cross-field rules. */
  build(raw: { [K in keyof S]: z.output<S[K]> }): T;
}

/** Declares a section (keeps its types inferred). */
export function section<N extends string, S extends Shape, T>(s: Section<N, S, T>): Section<N, S, T> {
  return s;
}

// biome-ignore lint/suspicious/noExplicitAny: a list of sections of any shape.
type AnySection = Section<string, any, unknown>;

/** The loaded configuration of `Ss`: each section's built part under its name. */
export type ConfigOf<Ss extends readonly AnySection[]> = {
  readonly [S in Ss[number] as S['name']]: S extends Section<string, Shape, infer T> ? T : never;
};

function deepFreeze<T>(o: T): T {
  if (o && typeof o === 'object') {
    for (const v of Object.values(o)) deepFreeze(v);
    Object.freeze(o);
  }
  return o;
}

/**
 * Validates the settings of `sections` in `env` and returns the frozen config. Empty strings count
 * as unset; `overrides` win over `env` (tests use them).
 * @throws ConfigError naming every malformed setting and every unknown one under an owned prefix.
 */
export function loadSections<const Ss extends readonly AnySection[]>(
  sections: Ss,
  env: Readonly<Record<string, string | undefined>> = process.env,
  overrides: Readonly<Record<string, string | number | undefined>> = {},
): ConfigOf<Ss> {
  const declared = new Set(sections.flatMap((s) => Object.keys(s.shape)));
  const owned = sections.flatMap((s) => s.prefixes);
  const problems: string[] = [];
  for (const key of new Set([...Object.keys(env), ...Object.keys(overrides)]))
    if (!declared.has(key) && owned.some((p) => key.startsWith(p)))
      problems.push(`${key}: unknown setting (this service reads ${owned.join(', ')}* settings it declares)`);
  const out: Record<string, unknown> = {};
  for (const s of sections) {
    const input: Record<string, string | number> = {};
    for (const key of Object.keys(s.shape)) {
      const v = overrides[key] ?? env[key];
      if (v !== undefined && v !== '') input[key] = v;
    }
    const parsed = z.object(s.shape).safeParse(input);
    if (!parsed.success) {
      for (const i of parsed.error.issues) problems.push(`${i.path.join('.')}: ${i.message}`);
      continue;
    }
    try {
      out[s.name] = s.build(parsed.data as never);
    } catch (err) {
      if (!(err instanceof ConfigError)) throw err;
      problems.push(err.message);
    }
  }
  if (problems.length > 0)
    throw new ConfigError(`invalid configuration:\n  ${[...new Set(problems)].join('\n  ')}`);
  return deepFreeze(out) as ConfigOf<Ss>;
}

/**
 * The loader of a service's configuration: `(env = process.env, overrides = {}) => config`.
 * @throws (the loader) ConfigError naming each malformed or unknown setting.
 */
export function configLoader<const Ss extends readonly AnySection[]>(sections: Ss) {
  return (
    env: Readonly<Record<string, string | undefined>> = process.env,
    overrides: Readonly<Record<string, string | number | undefined>> = {},
  ): ConfigOf<Ss> => loadSections(sections, env, overrides);
}
