/**
 * Shared pieces of the console's pages: loading and error states, the data-loading hook, the readiness
 * table. Server text is only ever rendered as text nodes (Preact escapes it), never as HTML.
 */
import type { ComponentChildren } from 'preact';
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

/** Runs an action (a button's POST): busy while running, its error kept for ErrorBox. */
export function useAction<A extends unknown[], T>(fn: (...args: A) => Promise<T>) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [result, setResult] = useState<T | null>(null);
  const run = async (...args: A): Promise<T | null> => {
    setBusy(true);
    setError(null);
    try {
      const r = await fn(...args);
      setResult(r);
      return r;
    } catch (e) {
      setError(e);
      return null;
    } finally {
      setBusy(false);
    }
  };
  return { busy, error, result, run, setResult };
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

/** The readiness checks of an operator as a table (data-testid readiness-table). */
export function ReadinessTable({ readiness }: { readiness: Readiness | null | undefined }) {
  if (!readiness) return <p>No readiness probe has run yet.</p>;
  return (
    <>
      <p data-testid="readiness-status">
        <Ok ok={readiness.ready} yes="Ready" no="Not ready" /> — checked {formatTime(readiness.checked_at)}
      </p>
      <table data-testid="readiness-table">
        <caption>Readiness checks</caption>
        <thead>
          <tr>
            <th scope="col">Check</th>
            <th scope="col">Method</th>
            <th scope="col">Path</th>
            <th scope="col">Result</th>
            <th scope="col">Detail</th>
          </tr>
        </thead>
        <tbody>
          {readiness.checks.map((c) => (
            <tr key={`${c.name}${c.path}`}>
              <th scope="row">{c.name}</th>
              <td>{c.method}</td>
              <td>
                <code>{c.path}</code>
              </td>
              <td>
                <Ok ok={c.ok} />
              </td>
              <td>{c.detail}</td>
            </tr>
          ))}
        </tbody>
      </table>
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
