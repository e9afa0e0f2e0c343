/**
 * Row-by-row comparison of a read model's live and rebuilt tables inside one snapshot (the one the
 * locked step opened, so both sides are at the same offsets): a full join on the primary key,
 * every column compared with IS DISTINCT FROM except the carried ones (not from the log). Runs
 * without locks beyond ordinary reads, so neither the API nor the live projector waits for it.
 */
import type { Sql } from '../db/pool.ts';
import type { ReadModel } from './models.ts';
import { ident, qualified } from './sql-names.ts';

/** Columns and primary key of one table. */
export interface TableShape {
  readonly table: string;
  readonly columns: readonly string[];
  readonly key: readonly string[];
}

/** One differing row. */
export interface Difference {
  readonly table: string;
  /** `missing`: in the live table only; `extra`: in the rebuilt one only; `changed`: both, other values. */
  readonly kind: 'missing' | 'extra' | 'changed';
  /** Primary key values. */
  readonly key: Readonly<Record<string, unknown>>;
  /** The differing columns (all of them for missing/extra). */
  readonly columns: readonly string[];
  readonly live: Readonly<Record<string, unknown>> | null;
  readonly rebuilt: Readonly<Record<string, unknown>> | null;
}

export interface TableComparison {
  readonly table: string;
  readonly liveRows: number;
  readonly rebuiltRows: number;
  /** Differing rows in all. */
  readonly differences: number;
}

export interface Comparison {
  readonly identical: boolean;
  readonly tables: readonly TableComparison[];
  /** The first differing rows (at most `maxReported` per table). */
  readonly differences: readonly Difference[];
}

/**
 * Reads the shapes of the model's tables in `schema` (before the swap: catalog rows read inside an
 * older snapshot would show the tables where they were).
 * @throws Error when a table has no primary key (a row-by-row comparison needs one).
 */
export async function tableShapes(sql: Sql, schema: string, model: ReadModel): Promise<TableShape[]> {
  const out: TableShape[] = [];
  for (const table of model.tables) {
    const cols = await sql<{ name: string }[]>`
      select column_name as name from information_schema.columns
      where table_schema = ${schema} and table_name = ${table} order by ordinal_position`;
    const key = await sql<{ name: string }[]>`
      select a.attname as name
      from pg_index i join pg_attribute a on a.attrelid = i.indrelid and a.attnum = any(i.indkey)
      where i.indrelid = to_regclass(${qualified(schema, table)}) and i.indisprimary
      order by array_position(i.indkey::int2[], a.attnum)`;
    if (key.length === 0) throw new Error(`${schema}.${table} has no primary key`);
    out.push({ table, columns: cols.map((c) => c.name), key: key.map((k) => k.name) });
  }
  return out;
}

const pick = (row: Record<string, unknown> | null, names: readonly string[]) =>
  row === null ? null : Object.fromEntries(names.map((n) => [n, row[n]]));

/**
 * Compares `liveSchema`'s tables with `rebuiltSchema`'s, through `sql` (the snapshot).
 * @param maxReported differing rows reported per table (all are counted).
 */
export async function compareTables(
  sql: Sql,
  shapes: readonly TableShape[],
  model: ReadModel,
  liveSchema: string,
  rebuiltSchema: string,
  maxReported = 20,
): Promise<Comparison> {
  const tables: TableComparison[] = [];
  const differences: Difference[] = [];
  for (const shape of shapes) {
    const carried = new Set(model.carried[shape.table] ?? []);
    const compared = shape.columns.filter((c) => !carried.has(c));
    const a = qualified(liveSchema, shape.table);
    const b = qualified(rebuiltSchema, shape.table);
    const k0 = ident(shape.key[0] as string);
    const on = shape.key.map((k) => `a.${ident(k)} = b.${ident(k)}`).join(' and ');
    const row = (alias: string) => `row(${compared.map((c) => `${alias}.${ident(c)}`).join(', ')})`;
    const [counts] = await sql.unsafe<{ live: number; rebuilt: number }[]>(
      `select (select count(*) from ${a})::int as live, (select count(*) from ${b})::int as rebuilt`,
    );
    const rows = await sql.unsafe<
      { total: number; live: Record<string, unknown> | null; rebuilt: Record<string, unknown> | null }[]
    >(
      `select count(*) over ()::int as total,
              case when a.${k0} is null then null else to_jsonb(a) end as live,
              case when b.${k0} is null then null else to_jsonb(b) end as rebuilt
       from ${a} a full join ${b} b on ${on}
       where a.${k0} is null or b.${k0} is null or ${row('a')} is distinct from ${row('b')}
       order by ${shape.key.map((k) => `coalesce(a.${ident(k)}, b.${ident(k)})`).join(', ')}
       limit ${maxReported}`,
    );
    tables.push({
      table: shape.table,
      liveRows: counts?.live ?? 0,
      rebuiltRows: counts?.rebuilt ?? 0,
      differences: rows[0]?.total ?? 0,
    });
    for (const r of rows) {
      const either = (r.live ?? r.rebuilt) as Record<string, unknown>;
      const changed =
        r.live && r.rebuilt
          ? compared.filter((c) => JSON.stringify(r.live?.[c]) !== JSON.stringify(r.rebuilt?.[c]))
          : compared;
      differences.push({
        table: shape.table,
        kind: r.live === null ? 'extra' : r.rebuilt === null ? 'missing' : 'changed',
        key: pick(either, shape.key) as Record<string, unknown>,
        columns: changed,
        live: pick(r.live, compared),
        rebuilt: pick(r.rebuilt, compared),
      });
    }
  }
  return { identical: tables.every((t) => t.differences === 0), tables, differences };
}
