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
  ActionButton,
  ActionState,
  binder,
  bindText,
  Choice,
  type Column,
  CopyButton,
  checkedOf,
  ErrorBox,
  LoadState,
  Ok,
  Page,
  Pre,
  type Readiness,
  ReadinessTable,
  Section,
  SelectBox,
  Table,
  Terms,
  useAction,
  useInterval,
  useLoad,
  useSelection,
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
      <LoadState of={o} whileEmpty />
      {d ? (
        <>
          <p>
            Operator <strong>{d.operator.name}</strong> (<code>{d.operator.operator_id}</code>), callbacks to{' '}
            <code>{d.operator.base_url}</code>
          </p>
          <Section id="h-readiness" title="Readiness">
            <ActionButton busy={probe.busy} onClick={() => probe.run()}>
              Probe now
            </ActionButton>
            <ActionState of={probe} />
            <ReadinessTable readiness={readiness} />
          </Section>
          <Section id="h-breaker" title="Circuit breaker">
            <p data-testid="breaker">
              State: <strong class={d.breaker.state === 'closed' ? 'ok' : 'bad'}>{d.breaker.state}</strong>
              {`; consecutive failures ${d.breaker.failures}`}
              {d.breaker.retry_at ? `; next try ${formatTime(d.breaker.retry_at)}` : ''}
              {d.breaker.last_error ? `; last error: ${d.breaker.last_error}` : ''}
            </p>
          </Section>
          <Section id="h-callbacks" title="Callbacks in the last hour">
            <Stats c={d.callbacks} />
            <Chart minutes={d.callbacks.per_minute} />
          </Section>
        </>
      ) : null}
    </Page>
  );
}

function Stats({ c }: { c: Overview['callbacks'] }) {
  const h = c.last_hour;
  return (
    <Terms
      class="stats"
      testid="callback-stats"
      rows={[
        ['Total', String(h.total)],
        ['Succeeded', String(h.succeeded)],
        ['Failed', String(h.failed)],
        ['Success rate', formatRate(h.success_rate)],
        ['Latency p50', formatMs(h.latency_ms?.p50)],
        ['Latency p99', formatMs(h.latency_ms?.p99)],
        ['Retrying', String(c.retrying)],
        ['Parked', String(c.parked)],
      ]}
    />
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

/** "3 callbacks", "1 callback": a count and its noun. */
function countOf(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? '' : 's'}`;
}

export function Callbacks() {
  const [form, setForm] = useState<SearchForm>(EMPTY_SEARCH);
  const [query, setQuery] = useState('');
  const selection = useSelection<number>();
  const list = useLoad(
    () => portal<{ callbacks: Callback[] }>('GET', `/api/portal/callbacks${query}`),
    [query],
  );
  const redrive = useAction(
    (tx_ids: number[]) =>
      portal<{ redriven: { tx_id: number }[] }>('POST', '/api/portal/callbacks/redrive', { tx_ids }),
    () => {
      selection.clear();
      list.reload(true);
    },
  );
  const test = useAction(() => portal<Exchange>('POST', '/api/portal/test-callback', {}));
  const field = binder(form, setForm);
  const search = (e: Event) => {
    e.preventDefault();
    const tz = new Date().getTimezoneOffset();
    selection.clear();
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
  const callbacks = list.data?.callbacks ?? [];
  const columns: readonly Column<Callback>[] = [
    { head: 'Select', cell: (c) => <SelectBox id={c.tx_id} of={selection} /> },
    { head: 'Tx id', cell: (c) => <a href={`#/portal/callbacks/${c.tx_id}`}>{c.tx_id}</a> },
    { head: 'Kind', cell: (c) => c.kind },
    { head: 'Player', cell: (c) => c.user_id },
    { head: 'Round', cell: (c) => c.round_id ?? '—' },
    { head: 'Amount', cell: (c) => formatMinor(c.amount_minor, c.currency) },
    { head: 'Status', cell: (c) => c.status },
    { head: 'Attempts', cell: (c) => c.attempts },
    { head: 'Next retry', cell: (c) => formatTime(c.next_attempt_at) },
    { head: 'Last error', cell: (c) => c.last_error ?? '' },
    { head: 'Created', cell: (c) => formatTime(c.created_at) },
  ];
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
          <Choice
            label="Status"
            name="status"
            value={form.status}
            options={STATUSES}
            set={(status) => setForm({ ...form, status })}
            labelOf={(s) => (s === '' ? 'any' : s)}
          />
          <button type="submit">Search</button>
        </form>
      </search>
      <div class="toolbar">
        <ActionButton
          busy={redrive.busy}
          disabled={selection.selected.size === 0}
          onClick={() => redrive.run([...selection.selected])}
        >
          Re-drive selected
        </ActionButton>
        <ActionButton busy={test.busy} onClick={() => test.run()}>
          Send test callback
        </ActionButton>
      </div>
      <ErrorBox error={redrive.error} />
      <p role="status" data-testid="redrive-result">
        {redrive.result
          ? `Re-driven: ${redrive.result.redriven.map((r) => r.tx_id).join(', ') || 'none'}`
          : ''}
      </p>
      <ErrorBox error={test.error} />
      {test.result ? (
        <Section id="h-test" title="Test callback" testid="test-callback-result">
          <ExchangeView x={test.result} />
        </Section>
      ) : null}
      <LoadState of={list} />
      <Table
        testid="callbacks-table"
        caption={countOf(callbacks.length, 'callback')}
        columns={columns}
        rows={callbacks}
        keyOf={(c) => c.tx_id}
        idAttr="data-tx-id"
        header={1}
      />
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
      <Terms
        class="headers"
        rows={SHOWN_HEADERS.filter((k) => h[k] !== undefined).map((k) => [k, <code key={k}>{h[k]}</code>])}
      />
      <p>Request body</p>
      <Pre value={x.request.body ?? '(none)'} />
      <p>Response body</p>
      <Pre value={x.response.body ?? '(none)'} />
    </div>
  );
}

const ATTEMPT_COLUMNS: readonly Column<Attempt>[] = [
  { head: 'Attempt', cell: (a) => a.attempt },
  { head: 'At', cell: (a) => formatTime(a.at) },
  { head: 'Status', cell: (a) => a.response.status ?? 'none' },
  { head: 'Class', cell: (a) => a.class },
  { head: 'Latency', cell: (a) => formatMs(a.latency_ms) },
  { head: 'Next retry', cell: (a) => formatTime(a.next_attempt_at) },
  { head: 'Error', cell: (a) => a.error ?? '' },
];

/** GET /api/portal/callbacks/:tx_id: the newest attempts (at most 100, oldest first) and how many there are. */
interface CallbackWithAttempts extends Omit<Callback, 'attempts'> {
  attempts: Attempt[];
  attempts_total: number;
}

/** "Showing the last 100 of 250 attempts" when the answer holds fewer attempts than recorded, else null. */
function shownOf(shown: number, total: number): string | null {
  return total > shown ? `Showing the last ${shown} of ${total} attempts` : null;
}

export function CallbackDetail({ txId }: { txId: string }) {
  const one = useLoad(
    () => portal<CallbackWithAttempts>('GET', `/api/portal/callbacks/${encodeURIComponent(txId)}`),
    [txId],
  );
  const redrive = useAction(
    () =>
      portal<{ redriven: { tx_id: number }[] }>('POST', '/api/portal/callbacks/redrive', {
        tx_ids: [Number(txId)],
      }),
    () => one.reload(true),
  );
  const c = one.data;
  // Until it is final, a callback changes on its own (tried, answered, retried): shown live.
  useInterval(() => one.reload(true), 2000, c !== null && (c.status === 'due' || c.status === 'in_flight'));
  const bounded = c ? shownOf(c.attempts.length, c.attempts_total) : null;
  return (
    <Page title={`Callback ${txId}`}>
      <p>
        <a href="#/portal/callbacks">Back to callbacks</a>
      </p>
      <LoadState of={one} whileEmpty />
      {c ? (
        <>
          <Terms
            class="stats"
            testid="callback-summary"
            rows={[
              ['Kind', c.kind],
              ['Status', c.status],
              ['Player', c.user_id],
              ['Round', c.round_id === null ? '—' : String(c.round_id)],
              ['Amount', formatMinor(c.amount_minor, c.currency)],
              ['Bet tx', c.bet_tx_id === null ? '—' : String(c.bet_tx_id)],
              ['Next retry', formatTime(c.next_attempt_at)],
              ['Created', formatTime(c.created_at)],
              ['Updated', formatTime(c.updated_at)],
            ]}
          />
          <ActionButton busy={redrive.busy} onClick={() => redrive.run()}>
            Re-drive
          </ActionButton>
          <ErrorBox error={redrive.error} />
          <p role="status">{redrive.result ? 'Re-driven.' : ''}</p>
          <h2>Attempts</h2>
          {bounded ? (
            <p class="warn" data-testid="attempts-shown">
              {bounded}: older attempts are not shown.
            </p>
          ) : null}
          <Table
            testid="attempts-table"
            caption={bounded ?? countOf(c.attempts.length, 'attempt')}
            columns={ATTEMPT_COLUMNS}
            rows={c.attempts}
            keyOf={(a) => a.attempt}
            idAttr="data-attempt"
          />
          {c.attempts.map((a) => (
            <Section
              key={a.attempt}
              id={`h-attempt-${a.attempt}`}
              title={`Attempt ${a.attempt}`}
              testid={`attempt-${a.attempt}`}
            >
              <ExchangeView x={a} />
            </Section>
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
  const open = useSelection<string>();
  const r = run.result;
  const columns: readonly Column<ConformanceRow>[] = [
    {
      head: 'Check',
      cell: (row) => (
        <>
          {row.title} <code class="muted">{row.id}</code>
        </>
      ),
    },
    { head: 'Result', cell: (row) => <Ok ok={row.ok} /> },
    { head: 'Detail', cell: (row) => row.detail },
    { head: 'Exchanges', cell: (row) => <Exchanges row={row} expanded={open.has(row.id)} set={open.set} /> },
  ];
  return (
    <Page title="Conformance">
      <p>
        Runs the wallet conformance kit against your callback endpoints: each check sends signed requests and
        judges the answers.
      </p>
      <ActionButton busy={run.busy} onClick={() => run.run()}>
        Run conformance kit
      </ActionButton>
      <ActionState of={run} />
      {r ? (
        <>
          <p data-testid="conformance-result">
            <Ok ok={r.passed} yes="Passed" no="Failed" />
          </p>
          <Table
            testid="conformance-table"
            caption="Conformance checks"
            columns={columns}
            rows={r.rows}
            keyOf={(row) => row.id}
            idAttr="data-row-id"
          />
        </>
      ) : null}
    </Page>
  );
}

/** The exchanges of a conformance row behind the button "Exchanges of <id>" (aria-expanded). */
function Exchanges({
  row,
  expanded,
  set,
}: {
  row: ConformanceRow;
  expanded: boolean;
  set: (id: string, on: boolean) => void;
}) {
  return (
    <>
      <button
        type="button"
        aria-expanded={expanded}
        aria-controls={`exchanges-${row.id}`}
        onClick={() => set(row.id, !expanded)}
      >
        Exchanges of {row.id}
      </button>{' '}
      <span class="muted">
        ({row.exchanges.length}, {expanded ? 'shown' : 'hidden'})
      </span>
      <div id={`exchanges-${row.id}`} data-testid={`exchanges-${row.id}`} hidden={!expanded}>
        {expanded ? row.exchanges.map((x, i) => <ExchangeView key={String(i)} x={x} />) : null}
      </div>
    </>
  );
}

export function Secret() {
  const [minutes, setMinutes] = useState('60');
  const [force, setForce] = useState(false);
  const rotate = useAction((overlap_s: number, force: boolean) =>
    portal<{ signing_secret: string; previous_valid_until: string }>('POST', '/api/portal/secret/rotate', {
      overlap_s,
      // Sent only when ticked: without it a rotation inside a previous one's overlap is refused (409).
      ...(force ? { force: true } : {}),
    }),
  );
  const r = rotate.result;
  return (
    <Page title="Signing secret">
      <p>
        Rotating makes a new signing secret. During the overlap every callback carries two signatures in{' '}
        <code>webhook-signature</code> (new and old, Standard Webhooks), so you can deploy the new secret
        before the old one stops signing. A second rotation while the previous secret still signs is refused
        unless you force it.
      </p>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          rotate.run(Math.round(Number(minutes) * 60), force);
        }}
      >
        <label>
          Overlap (minutes){' '}
          <input type="number" min="1" max="10080" required {...bindText(minutes, setMinutes)} />
        </label>
        <label class="inline">
          <input
            type="checkbox"
            name="force"
            checked={force}
            aria-describedby="force-warning"
            onChange={(e) => setForce(checkedOf(e))}
          />{' '}
          {FORCE_LABEL}
        </label>
        <p id="force-warning" class="warn" data-testid="force-warning">
          Warning: forcing stops the secret your last rotation replaced from signing at once; callbacks then
          carry only the signatures of your newest secret and of the new one. Tick it only when your verifier
          already uses the newest secret, or it will refuse callbacks.
        </p>
        <button type="submit" disabled={rotate.busy}>
          Rotate secret
        </button>
      </form>
      <ErrorBox error={rotate.error} />
      {r ? (
        <Section id="h-new-secret" title="New signing secret" class="notice">
          <p>Shown only once: copy it now.</p>
          <p>
            <code data-testid="new-secret">{r.signing_secret}</code>{' '}
            <CopyButton text={r.signing_secret} label="Copy secret" />
          </p>
          <p data-testid="previous-valid-until">
            The previous secret keeps signing until {formatTime(r.previous_valid_until)}.
          </p>
        </Section>
      ) : null}
    </Page>
  );
}

/** The accessible name of the Secret page's force checkbox (console/README.md). */
const FORCE_LABEL = 'Replace the previous secret now, even if its overlap has not ended (force)';

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
  const save = useAction(
    (f: SettingsForm) => {
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
    },
    (r) => setForm(formOf(r.operator)),
  );
  const current = form ?? (loaded.data ? formOf(loaded.data.operator) : null);
  const text = (k: keyof SettingsForm, label: string, numeric = false) => {
    if (!current) return null;
    const props = { name: k, ...binder(current, setForm)(k) };
    return (
      // biome-ignore lint/a11y/noLabelWithoutControl: the control is one of the two inputs of the branch
      <label>
        {label} {numeric ? <input type="number" min="1" {...props} /> : <input type="text" {...props} />}
      </label>
    );
  };
  const select = (k: keyof SettingsForm, label: string, options: readonly string[]) =>
    current ? (
      <Choice
        label={label}
        name={k}
        value={current[k]}
        options={[...new Set([...options, current[k]])]}
        set={(v) => setForm({ ...current, [k]: v })}
      />
    ) : null;
  const submit = (e: Event) => {
    e.preventDefault();
    if (current) save.run(current);
  };
  return (
    <Page title="Settings">
      <LoadState of={loaded} />
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
        <Section id="h-saved" title="Saved; readiness probed again">
          <p data-testid="settings-saved" role="status">
            Settings saved.
          </p>
          <ReadinessTable readiness={save.result.readiness} />
        </Section>
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

const RECONCILIATION_COLUMNS: readonly Column<Reconciliation['transactions'][number]>[] = [
  { head: 'Tx id', cell: (t) => t.tx_id },
  { head: 'Kind', cell: (t) => t.kind },
  { head: 'Bet tx', cell: (t) => t.bet_tx_id ?? '' },
  { head: 'Player', cell: (t) => t.user_id },
  { head: 'Round', cell: (t) => t.round_id },
  { head: 'Game', cell: (t) => t.game },
  { head: 'Amount', cell: (t) => formatMinor(t.amount_minor, t.currency) },
  { head: 'State', cell: (t) => t.state },
  { head: 'Status', cell: (t) => t.status },
  { head: 'Created', cell: (t) => formatTime(t.created_at) },
  { head: 'Finished', cell: (t) => formatTime(t.finished_at) },
];

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
          Date <input type="date" required {...bindText(date, setDate)} />
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
      <LoadState of={r} />
      {r.data ? (
        <>
          <h2>Totals</h2>
          <Pre value={r.data.totals} />
        </>
      ) : null}
      <Table
        testid="reconciliation-table"
        caption={`Transactions of ${shown} (UTC): ${rows.length}`}
        columns={RECONCILIATION_COLUMNS}
        rows={rows}
        keyOf={(t) => t.tx_id}
      />
    </Page>
  );
}
