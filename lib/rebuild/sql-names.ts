/**
 * Quoted SQL names of the rebuild's schemas and tables (the shadow schema, the comparison and the swap
 * all name tables of two schemas).
 */

/** `"name"`, for identifiers that lib/config/core.ts (sqlIdentifier) already limited to [a-z0-9_]. */
export const ident = (name: string) => `"${name.replaceAll('"', '""')}"`;
/** `"schema"."table"`. */
export const qualified = (schema: string, table: string) => `${ident(schema)}.${ident(table)}`;
