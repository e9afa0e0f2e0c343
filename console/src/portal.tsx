/**
 * The operator portal's pages (cookie session, endpoints under /api/portal/). Each shows only what the
 * API answers for the signed-in operator.
 */
import { useState } from 'preact/hooks';
import { portal } from './api.ts';
import {
  barsOf,
  formatMinor,
  formatMs,
  formatRate,
  formatTime,
  isoOfLocal,
  type MinuteCount,
  queryOf,
  reconciliationHref,
} from './format.ts';
import {
  CopyButton,
  ErrorBox,
  Loading,
  Ok,
  Page,
  Pre,
  type Readiness,
  ReadinessTable,
  useAction,
  useInterval,
  useLoad,
} from './ui.tsx';

interface Operator {
  operator_id: string;
  name: string;
  callback_form: string;
  base_url: string;
  bet_path: string;
  win_path: string;
  balance_path: string;
  rollback_path: string;
  timeout_ms: number;
  answer_table: unknown;
  round_close: string;
  round_end_path: string | null;
  amount_format: string;
}

interface Overview {
  operator: Operator;
  readiness: Readiness | null;
  breaker: { state: string; failures: number; retry_at: string | null; last_error: string | null };
  callbacks: {
    per_minute: MinuteCount[];
    last_hour: {
      total: number;
      succeeded: number;
      failed: number;
      success_rate: number | null;
      latency_ms: { p50: number; p99: number } | null;
    };
    retrying: number;
    parked: number;
  };
}

interface Callback {
  tx_id: number;
  kind: string;
  bet_tx_id: number | null;
  user_id: string;
  round_id: number | null;
  amount_minor: number | string;
  currency: string;
  status: string;
  attempts: number;
  next_attempt_at: string | null;
  last_answer: unknown;
  last_error: string | null;
  created_at: string;
  updated_at: string;
}

/** A request to the operator and its answer (a callback attempt, a test callback, a conformance step). */
interface Exchange {
  step?: string;
  request: {
    method: string | null;
    url: string | null;
    headers: Record<string, string> | null;
    body: string | null;
  };
  response: { status: number | null; body: string | null };
  latency_ms: number | null;
  class?: string;
  error?: string | null;
}

interface Attempt extends Exchange {
  attempt: number;
  at: string;
  class: string;
  code: string | null;
  error: string | null;
  next_attempt_at: string | null;
}

export function Overview() {
  const o = useLoad(() => portal<Overview>('GET', '/api/portal/overview'), []);
  const probe = useAction(() => portal<{ readiness: Readiness }>('POST', '/api/portal/probe', {}));
  const d = o.data;
  const readiness = probe.result?.readiness ?? d?.readiness;
  return (
    <Page title="Overview">
      <ErrorBox error={o.error} />
      {o.loading && !d ? <Loading /> : null}
      {d ? (
        <>
          <p>
            Operator <strong>{d.operator.name}</strong> (<code>{d.operator.operator_id}</code>), callbacks to{' '}
            <code>{d.operator.base_url}</code>
          </p>
          <section aria-labelledby="h-readiness">
            <h2 id="h-readiness">Readiness</h2>
            <button type="button" onClick={() => probe.run()} disabled={probe.busy}>
              Probe now
            </button>
            {probe.busy ? <Loading /> : null}
            <ErrorBox error={probe.error} />
            <ReadinessTable readiness={readiness} />
          </section>
          <section aria-labelledby="h-breaker">
            <h2 id="h-breaker">Circuit breaker</h2>
            <p data-testid="breaker">
              State: <strong class={d.breaker.state === 'closed' ? 'ok' : 'bad'}>{d.breaker.state}</strong>
              {`; consecutive failures ${d.breaker.failures}`}
              {d.breaker.retry_at ? `; next try ${formatTime(d.breaker.retry_at)}` : ''}
              {d.breaker.last_error ? `; last error: ${d.breaker.last_error}` : ''}
            </p>
          </section>
          <section aria-labelledby="h-callbacks">
            <h2 id="h-callbacks">Callbacks in the last hour</h2>
            <Stats c={d.callbacks} />
            <Chart minutes={d.callbacks.per_minute} />
          </section>
        </>
      ) : null}
    </Page>
  );
}

function Stats({ c }: { c: Overview['callbacks'] }) {
  const h = c.last_hour;
  const rows: [string, string][] = [
    ['Total', String(h.total)],
    ['Succeeded', String(h.succeeded)],
    ['Failed', String(h.failed)],
    ['Success rate', formatRate(h.success_rate)],
    ['Latency p50', formatMs(h.latency_ms?.p50)],
    ['Latency p99', formatMs(h.latency_ms?.p99)],
    ['Retrying', String(c.retrying)],
    ['Parked', String(c.parked)],
  ];
  return (
    <dl class="stats" data-testid="callback-stats">
      {rows.map(([k, v]) => (
        <div key={k}>
          <dt>{k}</dt>
          <dd>{v}</dd>
        </div>
      ))}
    </dl>
  );
}

const CHART_W = 600;
const CHART_H = 120;

function Chart({ minutes }: { minutes: readonly MinuteCount[] }) {
  const { bars, max } = barsOf(minutes, CHART_W, CHART_H);
  const total = minutes.reduce((s, m) => s + m.total, 0);
  const failed = minutes.reduce((s, m) => s + m.failed, 0);
  const label = `Callbacks per minute over the last ${minutes.length} minutes: ${total} in all, ${failed} failed; the tallest minute has ${max}.`;
  return (
    <figure>
      <svg
        role="img"
        aria-label={label}
        data-testid="per-minute-chart"
        viewBox={`0 0 ${CHART_W} ${CHART_H + 16}`}
        class="chart"
      >
        <title>{label}</title>
        <line x1="0" y1={CHART_H} x2={CHART_W} y2={CHART_H} class="axis" />
        {bars.map((b) => (
          <g key={b.minute}>
            <rect x={b.x} y={b.okY} width={b.width} height={b.okH} class="bar-ok" />
            <rect x={b.x} y={b.failY} width={b.width} height={b.failH} class="bar-fail" />
          </g>
        ))}
        <text x="0" y={CHART_H + 14} class="axis-label">
          {minutes[0] ? formatTime(minutes[0].minute) : ''}
        </text>
        <text x={CHART_W} y={CHART_H + 14} text-anchor="end" class="axis-label">
          max {max}/min
        </text>
      </svg>
      <figcaption>
        <span class="key key-ok" aria-hidden="true" /> succeeded{' '}
        <span class="key key-fail" aria-hidden="true" /> failed, per minute (UTC)
      </figcaption>
    </figure>
  );
}

/** The status filters of GET /api/portal/callbacks ('' = any, the API's default). */
const STATUSES = ['', 'waiting', 'parked', 'retrying', 'due', 'in_flight', 'done', 'skipped'];

interface SearchForm {
  user_id: string;
  tx_id: string;
  round_id: string;
  from: string;
  to: string;
  status: string;
}

const EMPTY_SEARCH: SearchForm = { user_id: '', tx_id: '', round_id: '', from: '', to: '', status: '' };

export function Callbacks() {
  const [form, setForm] = useState<SearchForm>(EMPTY_SEARCH);
  const [query, setQuery] = useState('');
  const [selected, setSelected] = useState<ReadonlySet<number>>(new Set());
  const list = useLoad(
    () => portal<{ callbacks: Callback[] }>('GET', `/api/portal/callbacks${query}`),
    [query],
  );
  const redrive = useAction((tx_ids: number[]) =>
    portal<{ redriven: { tx_id: number }[] }>('POST', '/api/portal/callbacks/redrive', { tx_ids }),
  );
  const test = useAction(() => portal<Exchange>('POST', '/api/portal/test-callback', {}));
  const field = (k: keyof SearchForm) => ({
    value: form[k],
    onInput: (e: Event) => setForm({ ...form, [k]: (e.currentTarget as HTMLInputElement).value }),
  });
  const search = (e: Event) => {
    e.preventDefault();
    const tz = new Date().getTimezoneOffset();
    setSelected(new Set());
    setQuery(
      queryOf({
        user_id: form.user_id,
        tx_id: form.tx_id,
        round_id: form.round_id,
        from: isoOfLocal(form.from, tz),
        to: isoOfLocal(form.to, tz),
        status: form.status,
      }),
    );
  };
  const toggle = (tx: number, on: boolean) => {
    const next = new Set(selected);
    if (on) next.add(tx);
    else next.delete(tx);
    setSelected(next);
  };
  const callbacks = list.data?.callbacks ?? [];
  return (
    <Page title="Callbacks">
      <search aria-label="Search callbacks">
        <form onSubmit={search} class="grid-form">
          <label>
            Player <input name="user_id" {...field('user_id')} />
          </label>
          <label>
            Transaction id <input name="tx_id" inputMode="numeric" {...field('tx_id')} />
          </label>
          <label>
            Round <input name="round_id" inputMode="numeric" {...field('round_id')} />
          </label>
          <label>
            From <input name="from" type="datetime-local" {...field('from')} />
          </label>
          <label>
            To <input name="to" type="datetime-local" {...field('to')} />
          </label>
          <label>
            Status
            <select
              name="status"
              value={form.status}
              onChange={(e) => setForm({ ...form, status: (e.currentTarget as HTMLSelectElement).value })}
            >
              {STATUSES.map((s) => (
                <option key={s} value={s}>
                  {s === '' ? 'any' : s}
                </option>
              ))}
            </select>
          </label>
          <button type="submit">Search</button>
        </form>
      </search>
      <div class="toolbar">
        <button
          type="button"
          disabled={selected.size === 0 || redrive.busy}
          onClick={async () => {
            if (await redrive.run([...selected])) {
              setSelected(new Set());
              list.reload(true);
            }
          }}
        >
          Re-drive selected
        </button>
        <button type="button" onClick={() => test.run()} disabled={test.busy}>
          Send test callback
        </button>
      </div>
      <ErrorBox error={redrive.error} />
      <p role="status" data-testid="redrive-result">
        {redrive.result
          ? `Re-driven: ${redrive.result.redriven.map((r) => r.tx_id).join(', ') || 'none'}`
          : ''}
      </p>
      <ErrorBox error={test.error} />
      {test.result ? (
        <section aria-labelledby="h-test" data-testid="test-callback-result">
          <h2 id="h-test">Test callback</h2>
          <ExchangeView x={test.result} />
        </section>
      ) : null}
      <ErrorBox error={list.error} />
      {list.loading ? <Loading /> : null}
      <table data-testid="callbacks-table">
        <caption>
          {callbacks.length} callback{callbacks.length === 1 ? '' : 's'}
        </caption>
        <thead>
          <tr>
            <th scope="col">Select</th>
            <th scope="col">Tx id</th>
            <th scope="col">Kind</th>
            <th scope="col">Player</th>
            <th scope="col">Round</th>
            <th scope="col">Amount</th>
            <th scope="col">Status</th>
            <th scope="col">Attempts</th>
            <th scope="col">Next retry</th>
            <th scope="col">Last error</th>
            <th scope="col">Created</th>
          </tr>
        </thead>
        <tbody>
          {callbacks.map((c) => (
            <tr key={c.tx_id} data-tx-id={c.tx_id}>
              <td>
                <input
                  type="checkbox"
                  aria-label={`Select ${c.tx_id}`}
                  checked={selected.has(c.tx_id)}
                  onChange={(e) => toggle(c.tx_id, (e.currentTarget as HTMLInputElement).checked)}
                />
              </td>
              <th scope="row">
                <a href={`#/portal/callbacks/${c.tx_id}`}>{c.tx_id}</a>
              </th>
              <td>{c.kind}</td>
              <td>{c.user_id}</td>
              <td>{c.round_id ?? '—'}</td>
              <td>{formatMinor(c.amount_minor, c.currency)}</td>
              <td>{c.status}</td>
              <td>{c.attempts}</td>
              <td>{formatTime(c.next_attempt_at)}</td>
              <td>{c.last_error ?? ''}</td>
              <td>{formatTime(c.created_at)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </Page>
  );
}

const SHOWN_HEADERS = ['webhook-id', 'webhook-timestamp', 'webhook-signature', 'content-type'];

function ExchangeView({ x }: { x: Exchange }) {
  const h = x.request.headers ?? {};
  return (
    <div class="exchange">
      <p>
        {x.step ? <strong>{x.step}: </strong> : null}
        <code>
          {x.request.method ?? '?'} {x.request.url ?? '(no request sent)'}
        </code>{' '}
        → status {x.response.status ?? 'none'}
        {x.class ? `, class ${x.class}` : ''}, latency {formatMs(x.latency_ms)}
      </p>
      {x.error ? <p class="bad">Error: {x.error}</p> : null}
      <dl class="headers">
        {SHOWN_HEADERS.map((k) =>
          h[k] !== undefined ? (
            <div key={k}>
              <dt>{k}</dt>
              <dd>
                <code>{h[k]}</code>
              </dd>
            </div>
          ) : null,
        )}
      </dl>
      <p>Request body</p>
      <Pre value={x.request.body ?? '(none)'} />
      <p>Response body</p>
      <Pre value={x.response.body ?? '(none)'} />
    </div>
  );
}

export function CallbackDetail({ txId }: { txId: string }) {
  const one = useLoad(
    () =>
      portal<Callback & { attempts: Attempt[] }>('GET', `/api/portal/callbacks/${encodeURIComponent(txId)}`),
    [txId],
  );
  const redrive = useAction(() =>
    portal<{ redriven: { tx_id: number }[] }>('POST', '/api/portal/callbacks/redrive', {
      tx_ids: [Number(txId)],
    }),
  );
  const c = one.data;
  // Until it is final, a callback changes on its own (tried, answered, retried): shown live.
  useInterval(() => one.reload(true), 2000, c !== null && (c.status === 'due' || c.status === 'in_flight'));
  return (
    <Page title={`Callback ${txId}`}>
      <p>
        <a href="#/portal/callbacks">Back to callbacks</a>
      </p>
      <ErrorBox error={one.error} />
      {one.loading && !c ? <Loading /> : null}
      {c ? (
        <>
          <dl class="stats" data-testid="callback-summary">
            {(
              [
                ['Kind', c.kind],
                ['Status', c.status],
                ['Player', c.user_id],
                ['Round', c.round_id === null ? '—' : String(c.round_id)],
                ['Amount', formatMinor(c.amount_minor, c.currency)],
                ['Bet tx', c.bet_tx_id === null ? '—' : String(c.bet_tx_id)],
                ['Next retry', formatTime(c.next_attempt_at)],
                ['Created', formatTime(c.created_at)],
                ['Updated', formatTime(c.updated_at)],
              ] as const
            ).map(([k, v]) => (
              <div key={k}>
                <dt>{k}</dt>
                <dd>{v}</dd>
              </div>
            ))}
          </dl>
          <button
            type="button"
            disabled={redrive.busy}
            onClick={async () => {
              if (await redrive.run()) one.reload(true);
            }}
          >
            Re-drive
          </button>
          <ErrorBox error={redrive.error} />
          <p role="status">{redrive.result ? 'Re-driven.' : ''}</p>
          <h2>Attempts</h2>
          <table data-testid="attempts-table">
            <caption>
              {c.attempts.length} attempt{c.attempts.length === 1 ? '' : 's'}
            </caption>
            <thead>
              <tr>
                <th scope="col">Attempt</th>
                <th scope="col">At</th>
                <th scope="col">Status</th>
                <th scope="col">Class</th>
                <th scope="col">Latency</th>
                <th scope="col">Next retry</th>
                <th scope="col">Error</th>
              </tr>
            </thead>
            <tbody>
              {c.attempts.map((a) => (
                <tr key={a.attempt} data-attempt={a.attempt}>
                  <th scope="row">{a.attempt}</th>
                  <td>{formatTime(a.at)}</td>
                  <td>{a.response.status ?? 'none'}</td>
                  <td>{a.class}</td>
                  <td>{formatMs(a.latency_ms)}</td>
                  <td>{formatTime(a.next_attempt_at)}</td>
                  <td>{a.error ?? ''}</td>
                </tr>
              ))}
            </tbody>
          </table>
          {c.attempts.map((a) => (
            <section
              key={a.attempt}
              data-testid={`attempt-${a.attempt}`}
              aria-labelledby={`h-attempt-${a.attempt}`}
            >
              <h3 id={`h-attempt-${a.attempt}`}>Attempt {a.attempt}</h3>
              <ExchangeView x={a} />
            </section>
          ))}
        </>
      ) : null}
    </Page>
  );
}

interface ConformanceRow {
  id: string;
  title: string;
  ok: boolean;
  detail: string;
  exchanges: Exchange[];
}

export function Conformance() {
  const run = useAction(() =>
    portal<{ passed: boolean; rows: ConformanceRow[] }>('POST', '/api/portal/conformance', {}),
  );
  const [open, setOpen] = useState<ReadonlySet<string>>(new Set());
  const r = run.result;
  return (
    <Page title="Conformance">
      <p>
        Runs the wallet conformance kit against your callback endpoints: each check sends signed requests and
        judges the answers.
      </p>
      <button type="button" onClick={() => run.run()} disabled={run.busy}>
        Run conformance kit
      </button>
      {run.busy ? <Loading /> : null}
      <ErrorBox error={run.error} />
      {r ? (
        <>
          <p data-testid="conformance-result">
            <Ok ok={r.passed} yes="Passed" no="Failed" />
          </p>
          <table data-testid="conformance-table">
            <caption>Conformance checks</caption>
            <thead>
              <tr>
                <th scope="col">Check</th>
                <th scope="col">Result</th>
                <th scope="col">Detail</th>
                <th scope="col">Exchanges</th>
              </tr>
            </thead>
            <tbody>
              {r.rows.map((row) => {
                const expanded = open.has(row.id);
                return (
                  <tr key={row.id} data-row-id={row.id}>
                    <th scope="row">
                      {row.title} <code class="muted">{row.id}</code>
                    </th>
                    <td>
                      <Ok ok={row.ok} />
                    </td>
                    <td>{row.detail}</td>
                    <td>
                      <button
                        type="button"
                        aria-expanded={expanded}
                        aria-controls={`exchanges-${row.id}`}
                        onClick={() => {
                          const next = new Set(open);
                          if (expanded) next.delete(row.id);
                          else next.add(row.id);
                          setOpen(next);
                        }}
                      >
                        Exchanges of {row.id}
                      </button>{' '}
                      <span class="muted">
                        ({row.exchanges.length}, {expanded ? 'shown' : 'hidden'})
                      </span>
                      <div id={`exchanges-${row.id}`} data-testid={`exchanges-${row.id}`} hidden={!expanded}>
                        {expanded
                          ? row.exchanges.map((x, i) => <ExchangeView key={String(i)} x={x} />)
                          : null}
                      </div>
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </>
      ) : null}
    </Page>
  );
}

export function Secret() {
  const [minutes, setMinutes] = useState('60');
  const rotate = useAction((overlap_s: number) =>
    portal<{ signing_secret: string; previous_valid_until: string }>('POST', '/api/portal/secret/rotate', {
      overlap_s,
    }),
  );
  const r = rotate.result;
  return (
    <Page title="Signing secret">
      <p>
        Rotating makes a new signing secret. During the overlap every callback carries two signatures in{' '}
        <code>webhook-signature</code> (new and old, Standard Webhooks), so you can deploy the new secret
        before the old one stops signing.
      </p>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          rotate.run(Math.round(Number(minutes) * 60));
        }}
      >
        <label>
          Overlap (minutes){' '}
          <input
            type="number"
            min="1"
            max="10080"
            required
            value={minutes}
            onInput={(e) => setMinutes((e.currentTarget as HTMLInputElement).value)}
          />
        </label>{' '}
        <button type="submit" disabled={rotate.busy}>
          Rotate secret
        </button>
      </form>
      <ErrorBox error={rotate.error} />
      {r ? (
        <section aria-labelledby="h-new-secret" class="notice">
          <h2 id="h-new-secret">New signing secret</h2>
          <p>Shown only once: copy it now.</p>
          <p>
            <code data-testid="new-secret">{r.signing_secret}</code>{' '}
            <CopyButton text={r.signing_secret} label="Copy secret" />
          </p>
          <p data-testid="previous-valid-until">
            The previous secret keeps signing until {formatTime(r.previous_valid_until)}.
          </p>
        </section>
      ) : null}
    </Page>
  );
}

type SettingsForm = Record<
  | 'bet_path'
  | 'win_path'
  | 'balance_path'
  | 'rollback_path'
  | 'round_end_path'
  | 'timeout_ms'
  | 'answer_table'
  | 'round_close'
  | 'amount_format',
  string
>;

function formOf(o: Operator): SettingsForm {
  return {
    bet_path: o.bet_path,
    win_path: o.win_path,
    balance_path: o.balance_path,
    rollback_path: o.rollback_path,
    round_end_path: o.round_end_path ?? '',
    timeout_ms: String(o.timeout_ms),
    answer_table: typeof o.answer_table === 'string' ? o.answer_table : JSON.stringify(o.answer_table),
    round_close: o.round_close,
    amount_format: o.amount_format,
  };
}

const PRESETS = ['seed', 'http-status', 'status-in-body'];

export function Settings() {
  const loaded = useLoad(() => portal<{ operator: Operator }>('GET', '/api/portal/settings'), []);
  const [form, setForm] = useState<SettingsForm | null>(null);
  const save = useAction((f: SettingsForm) => {
    // A preset is a name; a preset with codes is the JSON object the API gave (kept as it was).
    let answer_table: unknown = f.answer_table;
    if (f.answer_table.startsWith('{')) answer_table = JSON.parse(f.answer_table);
    return portal<{ operator: Operator; readiness: Readiness }>('PATCH', '/api/portal/settings', {
      bet_path: f.bet_path,
      win_path: f.win_path,
      balance_path: f.balance_path,
      rollback_path: f.rollback_path,
      round_end_path: f.round_end_path === '' ? null : f.round_end_path,
      timeout_ms: Number(f.timeout_ms),
      answer_table,
      round_close: f.round_close,
      amount_format: f.amount_format,
    });
  });
  const current = form ?? (loaded.data ? formOf(loaded.data.operator) : null);
  const text = (k: keyof SettingsForm, label: string, numeric = false) => {
    if (!current) return null;
    const props = {
      name: k,
      value: current[k],
      onInput: (e: Event) => setForm({ ...current, [k]: (e.currentTarget as HTMLInputElement).value }),
    };
    return (
      // biome-ignore lint/a11y/noLabelWithoutControl: the control is one of the two inputs of the branch
      <label>
        {label} {numeric ? <input type="number" min="1" {...props} /> : <input type="text" {...props} />}
      </label>
    );
  };
  const select = (k: keyof SettingsForm, label: string, options: readonly string[]) =>
    current ? (
      <label>
        {label}{' '}
        <select
          name={k}
          value={current[k]}
          onChange={(e) => setForm({ ...current, [k]: (e.currentTarget as HTMLSelectElement).value })}
        >
          {[...new Set([...options, current[k]])].map((o) => (
            <option key={o} value={o}>
              {o}
            </option>
          ))}
        </select>
      </label>
    ) : null;
  const submit = async (e: Event) => {
    e.preventDefault();
    if (!current) return;
    const r = await save.run(current);
    if (r) setForm(formOf(r.operator));
  };
  return (
    <Page title="Settings">
      <ErrorBox error={loaded.error} />
      {loaded.loading ? <Loading /> : null}
      {current ? (
        <form onSubmit={submit} class="grid-form">
          {text('bet_path', 'Bet path')}
          {text('win_path', 'Win path')}
          {text('balance_path', 'Balance path')}
          {text('rollback_path', 'Rollback path')}
          {text('timeout_ms', 'Timeout (ms)', true)}
          {select('answer_table', 'Answer preset', PRESETS)}
          {select('round_close', 'Round close', ['zero-win', 'round-end', 'none'])}
          {text('round_end_path', 'Round end path')}
          {select('amount_format', 'Amount format', ['string', 'number'])}
          <button type="submit" disabled={save.busy}>
            Save settings
          </button>
        </form>
      ) : null}
      <ErrorBox error={save.error} />
      {save.result ? (
        <section aria-labelledby="h-saved">
          <h2 id="h-saved">Saved; readiness probed again</h2>
          <p data-testid="settings-saved" role="status">
            Settings saved.
          </p>
          <ReadinessTable readiness={save.result.readiness} />
        </section>
      ) : null}
    </Page>
  );
}

interface Reconciliation {
  operator_id: string;
  date: string;
  transactions: {
    tx_id: number;
    kind: string;
    bet_tx_id: number | null;
    user_id: string;
    round_id: number;
    game: string;
    amount_minor: number | string;
    currency: string;
    state: string;
    status: string;
    created_at: string;
    finished_at: string | null;
  }[];
  totals: Record<string, unknown>;
}

/** Today's date (UTC) as YYYY-MM-DD, the reconciliation's default day. */
function todayUtc(): string {
  return new Date().toISOString().slice(0, 10);
}

export function ReconciliationPage() {
  const [date, setDate] = useState(todayUtc);
  const [shown, setShown] = useState(date);
  const r = useLoad(() => portal<Reconciliation>('GET', reconciliationHref(shown, 'json')), [shown]);
  const rows = r.data?.transactions ?? [];
  return (
    <Page title="Reconciliation">
      <form
        onSubmit={(e) => {
          e.preventDefault();
          setShown(date);
        }}
      >
        <label>
          Date{' '}
          <input
            type="date"
            required
            value={date}
            onInput={(e) => setDate((e.currentTarget as HTMLInputElement).value)}
          />
        </label>{' '}
        <button type="submit">Show</button>
      </form>
      <p>
        <a href={reconciliationHref(shown, 'csv')} download>
          Download CSV
        </a>{' '}
        ·{' '}
        <a href={reconciliationHref(shown, 'json')} download>
          Download JSON
        </a>
      </p>
      <ErrorBox error={r.error} />
      {r.loading ? <Loading /> : null}
      {r.data ? (
        <>
          <h2>Totals</h2>
          <Pre value={r.data.totals} />
        </>
      ) : null}
      <table data-testid="reconciliation-table">
        <caption>
          Transactions of {shown} (UTC): {rows.length}
        </caption>
        <thead>
          <tr>
            <th scope="col">Tx id</th>
            <th scope="col">Kind</th>
            <th scope="col">Bet tx</th>
            <th scope="col">Player</th>
            <th scope="col">Round</th>
            <th scope="col">Game</th>
            <th scope="col">Amount</th>
            <th scope="col">State</th>
            <th scope="col">Status</th>
            <th scope="col">Created</th>
            <th scope="col">Finished</th>
          </tr>
        </thead>
        <tbody>
          {rows.map((t) => (
            <tr key={t.tx_id}>
              <th scope="row">{t.tx_id}</th>
              <td>{t.kind}</td>
              <td>{t.bet_tx_id ?? ''}</td>
              <td>{t.user_id}</td>
              <td>{t.round_id}</td>
              <td>{t.game}</td>
              <td>{formatMinor(t.amount_minor, t.currency)}</td>
              <td>{t.state}</td>
              <td>{t.status}</td>
              <td>{formatTime(t.created_at)}</td>
              <td>{formatTime(t.finished_at)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </Page>
  );
}
