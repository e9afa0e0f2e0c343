/**
 * Shared pieces of the console's pages: loading and error states, the data-loading and action hooks,
 * tables, term lists, titled sections, form bindings and the readiness table. Server text is only ever
 * rendered as text nodes (Preact escapes it), never as HTML.
 */
import type { ComponentChildren, JSX } from 'preact';
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { ApiError } from './api.ts';
import { formatTime } from './format.ts';

/** The readiness view of an operator (GET /admin/operators/:id `readiness`). */
export interface Readiness {
  readonly ready: boolean;
  readonly checked_at: string;
  readonly checks: readonly { name: string; method: string; path: string; ok: boolean; detail: string }[];
}

/** The readable text of anything thrown by a request. */
export function messageOf(e: unknown): string {
  if (e instanceof ApiError) return e.message;
  if (e instanceof Error) return e.message;
  return String(e);
}

/** An error alert (role alert, data-testid error); nothing when there is no error. */
export function ErrorBox({ error }: { error: unknown }) {
  if (error === null || error === undefined) return null;
  return (
    <p role="alert" class="error" data-testid="error">
      {messageOf(error)}
    </p>
  );
}

/** The loading state: role status, text "Loading…". */
export function Loading() {
  return (
    <p role="status" class="muted">
      Loading…
    </p>
  );
}

/** State of a loaded resource. */
export interface Loaded<T> {
  readonly data: T | null;
  readonly error: unknown;
  readonly loading: boolean;
  /** Loads again; `quiet` keeps the current data shown meanwhile (no Loading state). */
  reload(quiet?: boolean): void;
}

/**
 * Loads `fn()` when mounted and whenever `deps` change; a failed load keeps the error for ErrorBox.
 * Answers of superseded loads are dropped.
 */
export function useLoad<T>(fn: () => Promise<T>, deps: readonly unknown[]): Loaded<T> {
  const [data, setData] = useState<T | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [loading, setLoading] = useState(true);
  const seq = useRef(0);
  const load = useCallback((quiet = false) => {
    const mine = ++seq.current;
    if (!quiet) setLoading(true);
    fn().then(
      (d) => {
        if (mine !== seq.current) return;
        setData(d);
        setError(null);
        setLoading(false);
      },
      (e: unknown) => {
        if (mine !== seq.current) return;
        setError(e);
        setLoading(false);
      },
    );
  }, deps);
  useEffect(() => {
    load();
    return () => {
      seq.current++;
    };
  }, [load]);
  return { data, error, loading, reload: load };
}

/**
 * The error and loading state of a load, in that order. `whileEmpty`: "Loading…" only while nothing
 * is shown yet (a page that keeps its data on screen while it loads again).
 */
export function LoadState({ of, whileEmpty = false }: { of: Loaded<unknown>; whileEmpty?: boolean }) {
  return (
    <>
      <ErrorBox error={of.error} />
      {of.loading && !(whileEmpty && of.data !== null) ? <Loading /> : null}
    </>
  );
}

/** A button that loads again, keeping the current data shown meanwhile. */
export function RefreshButton({ of }: { of: Loaded<unknown> }) {
  return (
    <button type="button" onClick={() => of.reload(true)}>
      Refresh
    </button>
  );
}

/** Calls `tick` every `ms` while `on` (the latest tick: a re-render does not restart the period). */
export function useInterval(tick: () => void, ms: number, on: boolean): void {
  const latest = useRef(tick);
  latest.current = tick;
  useEffect(() => {
    if (!on) return;
    const t = setInterval(() => latest.current(), ms);
    return () => clearInterval(t);
  }, [ms, on]);
}

/** State of an action (useAction). */
export interface Action<A extends unknown[], T> {
  readonly busy: boolean;
  readonly error: unknown;
  /** The answer of the last run that succeeded, or null. */
  readonly result: T | null;
  /** Runs the action; resolves with its answer, or null when it failed (the error is then kept). */
  run(...args: A): Promise<T | null>;
  setResult(r: T | null): void;
}

/**
 * Runs an action (a button's POST): busy while running, its error kept for ErrorBox. `onDone` runs
 * after each run that succeeded, with its answer (e.g. to load the list again).
 */
export function useAction<A extends unknown[], T>(
  fn: (...args: A) => Promise<T>,
  onDone?: (result: T) => void,
): Action<A, T> {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [result, setResult] = useState<T | null>(null);
  const run = async (...args: A): Promise<T | null> => {
    setBusy(true);
    setError(null);
    let r: T;
    try {
      r = await fn(...args);
      setResult(r);
    } catch (e) {
      setError(e);
      return null;
    } finally {
      setBusy(false);
    }
    onDone?.(r);
    return r;
  };
  return { busy, error, result, run, setResult };
}

/**
 * A button that runs an action: disabled while any run of it is busy (or `disabled`). `label` is the
 * accessible name when it differs from the visible text.
 */
export function ActionButton({
  busy,
  disabled = false,
  label,
  onClick,
  children,
}: {
  busy: boolean;
  disabled?: boolean;
  label?: string;
  onClick: () => unknown;
  children: ComponentChildren;
}) {
  return (
    <button type="button" aria-label={label} disabled={disabled || busy} onClick={onClick}>
      {children}
    </button>
  );
}

/** The error of an action and "Loading…" while it runs (one at a time: a run clears the error). */
export function ActionState({ of }: { of: { busy: boolean; error: unknown } }) {
  return (
    <>
      <ErrorBox error={of.error} />
      {of.busy ? <Loading /> : null}
    </>
  );
}

/** A page: its level-1 heading and content. */
export function Page({ title, children }: { title: string; children: ComponentChildren }) {
  useEffect(() => {
    document.title = `${title} · Console`;
  }, [title]);
  return (
    <>
      <h1>{title}</h1>
      {children}
    </>
  );
}

/** Pass/fail text with a colour and a word (never the colour alone). */
export function Ok({ ok, yes = 'pass', no = 'fail' }: { ok: boolean; yes?: string; no?: string }) {
  return <span class={ok ? 'ok' : 'bad'}>{ok ? yes : no}</span>;
}

/** A column of a Table: its header text and its cell of a row. */
export interface Column<R> {
  readonly head: string;
  readonly cell: (row: R) => ComponentChildren;
  /** The cell's class (e.g. 'warn'), when it has one. */
  readonly tone?: (row: R) => string;
  /** How many columns the cell spans (the next ones are then left out of that row); 1 when absent. */
  readonly span?: (row: R) => number;
}

/**
 * A data table (`data-testid` = testid): a caption, one `th scope="col"` per column, one `tr` per row
 * with its key in the attribute `idAttr` and the attributes of `attrs` (data-* selectors), the cell of column `header` as the row header
 * (`th scope="row"`), the others `td`.
 */
export function Table<R>({
  testid,
  caption,
  columns,
  rows,
  keyOf,
  idAttr,
  attrs,
  header = 0,
}: {
  testid: string;
  caption: ComponentChildren;
  columns: readonly Column<R>[];
  rows: readonly R[];
  keyOf: (row: R) => string | number;
  /** The data attribute holding each row's key (what the browser tests select a row by). */
  idAttr?: string;
  attrs?: (row: R) => Record<string, string | number>;
  header?: number;
}) {
  const cellsOf = (row: R) => {
    const cells: JSX.Element[] = [];
    for (let i = 0; i < columns.length; ) {
      const c = columns[i] as Column<R>;
      const span = c.span?.(row) ?? 1;
      const tone = c.tone?.(row);
      const colSpan = span === 1 ? undefined : span;
      cells.push(
        i === header ? (
          <th key={c.head} scope="row" class={tone} colSpan={colSpan}>
            {c.cell(row)}
          </th>
        ) : (
          <td key={c.head} class={tone} colSpan={colSpan}>
            {c.cell(row)}
          </td>
        ),
      );
      i += span;
    }
    return cells;
  };
  return (
    <table data-testid={testid}>
      <caption>{caption}</caption>
      <thead>
        <tr>
          {columns.map((c) => (
            <th key={c.head} scope="col">
              {c.head}
            </th>
          ))}
        </tr>
      </thead>
      <tbody>
        {rows.map((row) => (
          <tr key={keyOf(row)} {...(idAttr ? { [idAttr]: keyOf(row) } : {})} {...attrs?.(row)}>
            {cellsOf(row)}
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** Term/description pairs as a `<dl>`, each pair in a `<div>`. */
export function Terms({
  rows,
  class: cls,
  testid,
}: {
  rows: readonly (readonly [string, ComponentChildren])[];
  class?: string;
  testid?: string;
}) {
  return (
    <dl class={cls} data-testid={testid}>
      {rows.map(([k, v]) => (
        <div key={k}>
          <dt>{k}</dt>
          <dd>{v}</dd>
        </div>
      ))}
    </dl>
  );
}

/** A section named by its heading (`aria-labelledby` = the heading's `id`), level 2 unless `level`. */
export function Section({
  id,
  title,
  level = 2,
  class: cls,
  testid,
  children,
}: {
  id: string;
  title: ComponentChildren;
  level?: 2 | 3;
  class?: string;
  testid?: string;
  children?: ComponentChildren;
}) {
  const Heading = level === 2 ? 'h2' : 'h3';
  return (
    <section aria-labelledby={id} class={cls} data-testid={testid}>
      <Heading id={id}>{title}</Heading>
      {children}
    </section>
  );
}

/** The value of the input or select an event came from. */
export function inputValue(e: Event): string {
  return (e.currentTarget as HTMLInputElement | HTMLSelectElement).value;
}

/** Whether the checkbox an event came from is now checked. */
export function checkedOf(e: Event): boolean {
  return (e.currentTarget as HTMLInputElement).checked;
}

/** `value` and `onInput` of a text input kept in `set`. */
export function bindText(value: string, set: (v: string) => void) {
  return { value, onInput: (e: Event) => set(inputValue(e)) };
}

/** A binder of a form kept as one object: `bind(k)` gives an input its value and `onInput`. */
export function binder<F extends { [K in keyof F]: string }>(form: F, set: (f: F) => void) {
  return (k: keyof F) => ({ value: form[k], onInput: (e: Event) => set({ ...form, [k]: inputValue(e) }) });
}

/** A copy of `set` with `item` in it (`on`) or not. */
export function toggled<K>(set: ReadonlySet<K>, item: K, on: boolean): ReadonlySet<K> {
  const next = new Set(set);
  if (on) next.add(item);
  else next.delete(item);
  return next;
}

/** A set of chosen rows (checkboxes), starting with `initial`. */
export function useSelection<K>(initial: readonly K[] = []) {
  const [selected, setSelected] = useState<ReadonlySet<K>>(() => new Set(initial));
  return {
    selected,
    has: (k: K) => selected.has(k),
    set: (k: K, on: boolean) => setSelected(toggled(selected, k, on)),
    clear: () => setSelected(new Set()),
  };
}

/** The checkbox of a row, named "Select <id>". */
export function SelectBox<K extends string | number>({
  id,
  of,
}: {
  id: K;
  of: { has(k: K): boolean; set(k: K, on: boolean): void };
}) {
  return (
    <input
      type="checkbox"
      aria-label={`Select ${id}`}
      checked={of.has(id)}
      onChange={(e) => of.set(id, checkedOf(e))}
    />
  );
}

/** A select of `options` inside its label (the accessible name), each option shown as its value unless `labelOf`. */
export function Choice({
  label,
  value,
  options,
  set,
  name,
  labelOf = (o) => o,
}: {
  label: string;
  value: string;
  options: readonly string[];
  set: (v: string) => void;
  name?: string;
  labelOf?: (o: string) => string;
}) {
  return (
    <label>
      {label}{' '}
      <select name={name} value={value} onChange={(e) => set(inputValue(e))}>
        {options.map((o) => (
          <option key={o} value={o}>
            {labelOf(o)}
          </option>
        ))}
      </select>
    </label>
  );
}

const READINESS_COLUMNS: readonly Column<Readiness['checks'][number]>[] = [
  { head: 'Check', cell: (c) => c.name },
  { head: 'Method', cell: (c) => c.method },
  { head: 'Path', cell: (c) => <code>{c.path}</code> },
  { head: 'Result', cell: (c) => <Ok ok={c.ok} /> },
  { head: 'Detail', cell: (c) => c.detail },
];

/** The readiness checks of an operator as a table (data-testid readiness-table). */
export function ReadinessTable({ readiness }: { readiness: Readiness | null | undefined }) {
  if (!readiness) return <p>No readiness probe has run yet.</p>;
  return (
    <>
      <p data-testid="readiness-status">
        <Ok ok={readiness.ready} yes="Ready" no="Not ready" /> — checked {formatTime(readiness.checked_at)}
      </p>
      <Table
        testid="readiness-table"
        caption="Readiness checks"
        columns={READINESS_COLUMNS}
        rows={readiness.checks}
        keyOf={(c) => `${c.name}${c.path}`}
      />
    </>
  );
}

/** JSON or text shown verbatim in a <pre> (as a text node), wrapped rather than scrolled. */
export function Pre({ value }: { value: unknown }) {
  const text = typeof value === 'string' ? value : JSON.stringify(value, null, 2);
  return <pre>{text ?? '—'}</pre>;
}

/** Copies text to the clipboard; the button says whether it worked. */
export function CopyButton({ text, label }: { text: string; label: string }) {
  const [done, setDone] = useState<string | null>(null);
  return (
    <>
      <button
        type="button"
        onClick={() =>
          navigator.clipboard.writeText(text).then(
            () => setDone('Copied'),
            () => setDone('Copy failed: select the text and copy it'),
          )
        }
      >
        {label}
      </button>
      <span role="status" class="muted">
        {done ?? ''}
      </span>
    </>
  );
}
