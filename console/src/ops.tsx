/**
 * The ops console's pages (admin key as bearer): the log's topics and consumer groups, dead letters,
 * read-model rebuilds, edges, API keys and operators.
 */
import { useState } from 'preact/hooks';
import { ops } from './api.ts';
import { formatTime } from './format.ts';
import {
  ActionButton,
  ActionState,
  binder,
  bindText,
  Choice,
  type Column,
  checkedOf,
  ErrorBox,
  LoadState,
  Ok,
  Page,
  Pre,
  type Readiness,
  ReadinessTable,
  RefreshButton,
  Section,
  SelectBox,
  Table,
  Terms,
  useAction,
  useInterval,
  useLoad,
  useSelection,
} from './ui.tsx';

/** Refresh period of the consumer groups and rebuilds pages, ms. */
const REFRESH_MS = 2000;

interface Topic {
  name: string;
  partitions: {
    partition: number;
    leader: number;
    replicas: number[];
    isr: number[];
    high_water_mark: string | number;
    low_water_mark: string | number;
  }[];
}

const TOPIC_COLUMNS: readonly Column<{ topic: string } & Topic['partitions'][number]>[] = [
  { head: 'Topic', cell: (p) => p.topic },
  { head: 'Partition', cell: (p) => p.partition },
  { head: 'Leader', cell: (p) => p.leader },
  { head: 'Replicas', cell: (p) => p.replicas.join(', ') },
  { head: 'In sync', cell: (p) => p.isr.join(', ') },
  { head: 'Low', cell: (p) => p.low_water_mark },
  { head: 'High', cell: (p) => p.high_water_mark },
];

export function Topics() {
  const t = useLoad(() => ops<{ topics: Topic[] }>('GET', '/admin/ops/topics'), []);
  const topics = t.data?.topics ?? [];
  return (
    <Page title="Topics">
      <RefreshButton of={t} />
      <LoadState of={t} />
      <Table
        testid="topics-table"
        caption={`${topics.length} topics, one row per partition`}
        columns={TOPIC_COLUMNS}
        rows={topics.flatMap((topic) => topic.partitions.map((p) => ({ ...p, topic: topic.name })))}
        keyOf={(p) => `${p.topic}/${p.partition}`}
        attrs={(p) => ({ 'data-topic': p.topic })}
      />
    </Page>
  );
}

interface Group {
  group_id: string;
  state: string;
  members: number;
  total_lag: number;
  topics: {
    topic: string;
    partitions: {
      partition: number;
      committed_offset: number | string | null;
      high_water_mark: number | string;
      lag: number;
    }[];
  }[];
}

/** One row of the groups table: a group's partition, or the group alone (`p` null) when it has none. */
interface GroupRow {
  grp: Group;
  p: (Group['topics'][number]['partitions'][number] & { topic: string }) | null;
}

const GROUP_COLUMNS: readonly Column<GroupRow>[] = [
  { head: 'Group', cell: (r) => r.grp.group_id },
  { head: 'State', cell: (r) => r.grp.state },
  { head: 'Members', cell: (r) => r.grp.members },
  { head: 'Total lag', cell: (r) => r.grp.total_lag },
  {
    head: 'Topic',
    cell: (r) => r.p?.topic ?? 'no committed partitions',
    span: (r) => (r.p ? 1 : 5),
  },
  { head: 'Partition', cell: (r) => r.p?.partition },
  { head: 'Committed', cell: (r) => r.p?.committed_offset ?? '—' },
  { head: 'High', cell: (r) => r.p?.high_water_mark },
  { head: 'Lag', cell: (r) => r.p?.lag, tone: (r) => (r.p && r.p.lag > 0 ? 'warn' : '') },
];

/** The table rows of the groups: one per committed partition, or one for a group without any. */
function groupRows(groups: readonly Group[]): GroupRow[] {
  return groups.flatMap((grp): GroupRow[] => {
    const rows = grp.topics.flatMap((t) => t.partitions.map((p) => ({ topic: t.topic, ...p })));
    return rows.length === 0 ? [{ grp, p: null }] : rows.map((p) => ({ grp, p }));
  });
}

export function Groups() {
  const [paused, setPaused] = useState(false);
  const [updated, setUpdated] = useState<string | null>(null);
  const g = useLoad(async () => {
    const r = await ops<{ groups: Group[] }>('GET', '/admin/ops/consumer-groups');
    setUpdated(new Date().toISOString());
    return r;
  }, []);
  useInterval(() => g.reload(true), REFRESH_MS, !paused);
  const groups = g.data?.groups ?? [];
  return (
    <Page title="Consumer groups">
      <label>
        <input type="checkbox" checked={paused} onChange={(e) => setPaused(checkedOf(e))} /> Pause auto
        refresh
      </label>{' '}
      <span class="muted" data-testid="groups-updated">
        {updated ? `Updated ${formatTime(updated)}` : ''}
        {paused ? ' (paused)' : ' (every 2 s)'}
      </span>
      <LoadState of={g} />
      <Table
        testid="groups-table"
        caption={`${groups.length} consumer groups, lag per partition`}
        columns={GROUP_COLUMNS}
        rows={groupRows(groups)}
        keyOf={(r) => (r.p ? `${r.grp.group_id}/${r.p.topic}/${r.p.partition}` : r.grp.group_id)}
        attrs={(r) => ({ 'data-group-id': r.grp.group_id })}
      />
    </Page>
  );
}

export function DeadLetters({ topic }: { topic: string }) {
  // Keyed by its topic: another topic starts a fresh page, never showing the last one's records.
  return topic ? <DeadLetterRecords key={topic} topic={topic} /> : <DeadLetterTopics />;
}

interface DeadLetterTopic {
  topic: string;
  source_topic: string;
  count: number;
}

const DEAD_LETTER_COLUMNS: readonly Column<DeadLetterTopic>[] = [
  { head: 'Topic', cell: (t) => <a href={`#/ops/dead-letters/${encodeURIComponent(t.topic)}`}>{t.topic}</a> },
  { head: 'Source topic', cell: (t) => t.source_topic },
  { head: 'Count', cell: (t) => t.count },
];

function DeadLetterTopics() {
  const d = useLoad(() => ops<{ topics: DeadLetterTopic[] }>('GET', '/admin/ops/dead-letters'), []);
  return (
    <Page title="Dead letters">
      <LoadState of={d} />
      <Table
        testid="dead-letters-table"
        caption="Dead-letter topics"
        columns={DEAD_LETTER_COLUMNS}
        rows={d.data?.topics ?? []}
        keyOf={(t) => t.topic}
        idAttr="data-topic"
      />
    </Page>
  );
}

interface DeadRecord {
  partition: number;
  offset: number;
  key: string | null;
  timestamp: string;
  headers: Record<string, string>;
  reason: string | null;
  source: { topic: string | null; partition: number | null; offset: number | null };
  value: unknown;
  value_encoding?: 'json' | 'base64';
  decode_error?: string | null;
  replays?: { to: { topic: string; partition: number; offset: number }; at: string }[];
}

interface Position {
  partition: number;
  offset: number;
}

/** What POST …/replay did, per record. */
interface ReplayView {
  replayed: (Position & { to: Position })[];
  already_replayed: (Position & { at: string })[];
  undecodable: (Position & { reason: string })[];
}

const at = (p: Position) => `${p.partition}:${p.offset}`;

/** One line per outcome of a replay, naming the records. */
function replaySummary(r: ReplayView): string {
  const parts = [
    r.replayed.length > 0
      ? `Replayed ${r.replayed.map((x) => `${at(x)} (now at ${at(x.to)})`).join(', ')}.`
      : 'Nothing replayed.',
  ];
  if (r.already_replayed.length > 0)
    parts.push(`Already replayed before: ${r.already_replayed.map(at).join(', ')}.`);
  if (r.undecodable.length > 0)
    parts.push(
      `Still undecodable, not replayed: ${r.undecodable.map((x) => `${at(x)} (${x.reason})`).join(', ')}.`,
    );
  return parts.join(' ');
}

function DeadLetterRecords({ topic }: { topic: string }) {
  const path = `/admin/ops/dead-letters/${encodeURIComponent(topic)}`;
  const d = useLoad(() => ops<{ records: DeadRecord[] }>('GET', `${path}?limit=100`), [path]);
  const selection = useSelection<string>();
  const [inspected, setInspected] = useState<DeadRecord | null>(null);
  const replay = useAction(
    (records: Position[]) => ops<ReplayView>('POST', `${path}/replay`, { records }),
    () => {
      selection.clear();
      d.reload(true);
    },
  );
  const records = d.data?.records ?? [];
  const columns: readonly Column<DeadRecord>[] = [
    { head: 'Select', cell: (r) => <SelectBox id={at(r)} of={selection} /> },
    { head: 'Partition:offset', cell: at },
    { head: 'Time', cell: (r) => formatTime(r.timestamp) },
    { head: 'Reason', cell: (r) => r.reason ?? '—' },
    {
      head: 'Source',
      cell: ({ source: s }) => (s.topic === null ? '—' : `${s.topic} ${s.partition}:${s.offset}`),
    },
    {
      head: 'Replayed',
      cell: (r) => (r.replays && r.replays.length > 0 ? `yes (${r.replays.length})` : 'no'),
    },
    {
      head: 'Inspect',
      cell: (r) => (
        <button type="button" onClick={() => setInspected(r)}>
          Inspect {at(r)}
        </button>
      ),
    },
  ];
  return (
    <Page title={`Dead letters of ${topic}`}>
      <p>
        <a href="#/ops/dead-letters">Back to dead letters</a>
      </p>
      <ActionButton
        busy={replay.busy}
        disabled={selection.selected.size === 0}
        onClick={() =>
          replay.run(
            records
              .filter((r) => selection.has(at(r)))
              .map((r) => ({ partition: r.partition, offset: r.offset })),
          )
        }
      >
        Replay selected
      </ActionButton>
      <ErrorBox error={replay.error} />
      <p role="status" data-testid="replay-result">
        {replay.result ? replaySummary(replay.result) : ''}
      </p>
      <LoadState of={d} />
      <Table
        testid="dead-letter-records-table"
        caption={`${records.length} records`}
        columns={columns}
        rows={records}
        keyOf={at}
        idAttr="data-record"
        header={1}
      />
      {inspected ? (
        <Section id="h-record" title={`Record ${at(inspected)}`} testid="dead-letter-record">
          <Pre value={inspected} />
        </Section>
      ) : null}
    </Page>
  );
}

interface Rebuild {
  rebuild_id: string;
  read_model: string;
  state: string;
  progress: { replayed: number; target: number; step: string | null };
  started_at: string;
  finished_at?: string | null;
  error: { code: string; message: string } | null;
}

/** "1200 / 5000 (24 %), step" of a rebuild's progress. */
function progressText(p: Rebuild['progress']): string {
  const pct = p.target > 0 ? ` (${Math.min(100, Math.floor((p.replayed / p.target) * 100))} %)` : '';
  return `${p.replayed} / ${p.target}${pct}${p.step ? `, ${p.step}` : ''}`;
}

const READ_MODELS = ['rounds', 'api-keys', 'wallet'];

const CALLBACK_FORMS = ['A', 'B'];

export function Rebuilds() {
  const [model, setModel] = useState('rounds');
  const list = useLoad(() => ops<{ rebuilds: Rebuild[] }>('GET', '/admin/ops/rebuilds'), []);
  const reload = () => list.reload(true);
  const start = useAction(
    (read_model: string) => ops<Rebuild>('POST', '/admin/ops/rebuilds', { read_model }),
    reload,
  );
  const swap = useAction(
    (id: string) => ops<Rebuild>('POST', `/admin/ops/rebuilds/${encodeURIComponent(id)}/swap`, {}),
    reload,
  );
  const rebuilds = list.data?.rebuilds ?? [];
  useInterval(
    () => list.reload(true),
    REFRESH_MS,
    rebuilds.some((r) => r.state === 'running' || r.state === 'swapping'),
  );
  const columns: readonly Column<Rebuild>[] = [
    { head: 'Id', cell: (r) => r.rebuild_id },
    { head: 'Read model', cell: (r) => r.read_model },
    { head: 'State', cell: (r) => r.state },
    { head: 'Progress', cell: (r) => progressText(r.progress) },
    { head: 'Started', cell: (r) => formatTime(r.started_at) },
    { head: 'Error', cell: (r) => (r.error ? `${r.error.code}: ${r.error.message}` : '') },
    {
      head: 'Swap',
      cell: (r) => (
        <ActionButton
          busy={swap.busy}
          disabled={r.state !== 'caught-up'}
          label={`Swap ${r.rebuild_id}`}
          onClick={() => swap.run(r.rebuild_id)}
        >
          Swap
        </ActionButton>
      ),
    },
  ];
  return (
    <Page title="Rebuilds">
      <form
        onSubmit={(e) => {
          e.preventDefault();
          start.run(model);
        }}
      >
        <Choice label="Read model" value={model} options={READ_MODELS} set={setModel} />{' '}
        <button type="submit" disabled={start.busy}>
          Start rebuild
        </button>
      </form>
      <ErrorBox error={start.error} />
      <ErrorBox error={swap.error} />
      <LoadState of={list} />
      <Table
        testid="rebuilds-table"
        caption="Rebuilds (refreshed every 2 s while one runs)"
        columns={columns}
        rows={rebuilds}
        keyOf={(r) => r.rebuild_id}
        idAttr="data-rebuild-id"
      />
    </Page>
  );
}

interface Edge {
  url: string;
  ready: boolean;
  status?: string | null;
  subscribers: { websocket: number; sse: number; grpc: number; webtransport: number } | null;
  error?: string | null;
}

const EDGE_COLUMNS: readonly Column<Edge>[] = [
  { head: 'URL', cell: (x) => x.url },
  {
    head: 'Ready',
    cell: (x) => (
      <>
        <Ok ok={x.ready} yes="ready" no="not ready" />
        {x.error ? ` (${x.error})` : ''}
      </>
    ),
  },
  { head: 'WebSocket', cell: (x) => x.subscribers?.websocket ?? '—' },
  { head: 'SSE', cell: (x) => x.subscribers?.sse ?? '—' },
  { head: 'gRPC', cell: (x) => x.subscribers?.grpc ?? '—' },
  { head: 'WebTransport', cell: (x) => x.subscribers?.webtransport ?? '—' },
];

export function Edges() {
  const e = useLoad(() => ops<{ edges: Edge[] }>('GET', '/admin/ops/edges'), []);
  return (
    <Page title="Edges">
      <RefreshButton of={e} />
      <LoadState of={e} />
      <Table
        testid="edges-table"
        caption="Edges and their subscribers per protocol"
        columns={EDGE_COLUMNS}
        rows={e.data?.edges ?? []}
        keyOf={(x) => x.url}
      />
    </Page>
  );
}

interface Key {
  id: string;
  name: string;
  kind: string;
  scopes: string[];
  admin: boolean;
  created_at: string;
  revoked_at: string | null;
  last_used: string | null;
}

export function Keys() {
  const list = useLoad(() => ops<{ keys: Key[] }>('GET', '/api/auth/keys'), []);
  const scopes = useLoad(() => ops<{ scopes: { name: string }[] }>('GET', '/api/auth/scopes'), []);
  const [name, setName] = useState('');
  const chosen = useSelection(['read:rounds']);
  const reload = () => list.reload(true);
  const create = useAction(
    (body: { name: string; scopes: string[] }) =>
      ops<{ key: Key; secret: string }>('POST', '/api/auth/keys', { ...body, kind: 'private' }),
    reload,
  );
  const revoke = useAction(
    (id: string) => ops<{ key: Key }>('POST', `/api/auth/keys/${encodeURIComponent(id)}/revoke`, {}),
    reload,
  );
  const keys = list.data?.keys ?? [];
  const columns: readonly Column<Key>[] = [
    { head: 'Id', cell: (k) => <code>{k.id}</code> },
    { head: 'Name', cell: (k) => k.name },
    { head: 'Kind', cell: (k) => k.kind },
    { head: 'Scopes', cell: (k) => k.scopes.join(' ') },
    { head: 'Created', cell: (k) => formatTime(k.created_at) },
    { head: 'Revoked', cell: (k) => formatTime(k.revoked_at) },
    { head: 'Last used', cell: (k) => formatTime(k.last_used) },
    {
      head: 'Revoke',
      cell: (k) => (
        <ActionButton
          busy={revoke.busy}
          disabled={k.revoked_at !== null}
          label={`Revoke ${k.id}`}
          onClick={() => revoke.run(k.id)}
        >
          Revoke
        </ActionButton>
      ),
    },
  ];
  return (
    <Page title="API keys">
      <ErrorBox error={revoke.error} />
      <LoadState of={list} />
      <Table
        testid="keys-table"
        caption={`${keys.length} keys`}
        columns={columns}
        rows={keys}
        keyOf={(k) => k.id}
        idAttr="data-key-id"
      />
      <h2>Create a key</h2>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          create.run({ name, scopes: [...chosen.selected] });
        }}
      >
        <label>
          Name <input required maxLength={128} {...bindText(name, setName)} />
        </label>
        <fieldset>
          <legend>Scopes</legend>
          <ErrorBox error={scopes.error} />
          {(scopes.data?.scopes ?? []).map((s) => (
            <label key={s.name} class="inline">
              <input
                type="checkbox"
                checked={chosen.has(s.name)}
                onChange={(e) => chosen.set(s.name, checkedOf(e))}
              />{' '}
              {s.name}
            </label>
          ))}
        </fieldset>
        <button type="submit" disabled={create.busy}>
          Create key
        </button>
      </form>
      <ErrorBox error={create.error} />
      {create.result ? (
        <Section id="h-new-key" level={3} title={`Key ${create.result.key.id} created`} class="notice">
          <p>Its secret is shown only once:</p>
          <p>
            <code data-testid="new-key-secret">{create.result.secret}</code>
          </p>
        </Section>
      ) : null}
    </Page>
  );
}

interface OperatorRow {
  operator_id: string;
  name: string;
  callback_form: string;
  base_url: string;
  readiness: Readiness | null;
}

export function Operators() {
  const list = useLoad(() => ops<{ operators: OperatorRow[] }>('GET', '/admin/operators'), []);
  const [form, setForm] = useState({ name: '', base_url: '', callback_form: 'A' });
  const register = useAction(
    (body: typeof form) =>
      ops<OperatorRow & { api_token: string; signing_secret: string }>('POST', '/admin/operators', body),
    () => list.reload(true),
  );
  const probe = useAction((id: string) =>
    ops<OperatorRow>('POST', `/admin/operators/${encodeURIComponent(id)}/probe`, {}),
  );
  const link = useAction((id: string) =>
    ops<{ operator_id: string; url: string; expires_at: string }>(
      'POST',
      `/admin/operators/${encodeURIComponent(id)}/portal-link`,
      {},
    ),
  );
  const operators = list.data?.operators ?? [];
  const bind = binder(form, setForm);
  const columns: readonly Column<OperatorRow>[] = [
    { head: 'Id', cell: (o) => <code>{o.operator_id}</code> },
    { head: 'Name', cell: (o) => o.name },
    { head: 'Form', cell: (o) => o.callback_form },
    { head: 'Base URL', cell: (o) => o.base_url },
    {
      head: 'Ready',
      cell: (o) => (o.readiness ? <Ok ok={o.readiness.ready} yes="ready" no="not ready" /> : 'not probed'),
    },
    {
      head: 'Actions',
      cell: (o) => (
        <>
          <ActionButton
            busy={probe.busy}
            label={`Readiness of ${o.operator_id}`}
            onClick={() => probe.run(o.operator_id)}
          >
            Readiness
          </ActionButton>{' '}
          <ActionButton
            busy={link.busy}
            label={`Portal link for ${o.operator_id}`}
            onClick={() => link.run(o.operator_id)}
          >
            Portal link
          </ActionButton>
        </>
      ),
    },
  ];
  return (
    <Page title="Operators">
      <LoadState of={list} />
      <Table
        testid="operators-table"
        caption={`${operators.length} operators`}
        columns={columns}
        rows={operators}
        keyOf={(o) => o.operator_id}
        idAttr="data-operator-id"
      />
      <ActionState of={probe} />
      {probe.result ? (
        <Section id="h-probe" title={`Readiness of ${probe.result.operator_id}`}>
          <ReadinessTable readiness={probe.result.readiness} />
        </Section>
      ) : null}
      <ErrorBox error={link.error} />
      {link.result ? (
        <Section id="h-link" title={`Portal link for ${link.result.operator_id}`} class="notice">
          <p>
            Single use, valid until {formatTime(link.result.expires_at)}:{' '}
            <a data-testid="portal-link" href={link.result.url}>
              {link.result.url}
            </a>
          </p>
        </Section>
      ) : null}
      <h2>Register an operator</h2>
      <form
        class="grid-form"
        onSubmit={(e) => {
          e.preventDefault();
          register.run(form);
        }}
      >
        <label>
          Name <input required {...bind('name')} />
        </label>
        <label>
          Base URL{' '}
          <input required type="url" placeholder="https://wallet.example.com" {...bind('base_url')} />
        </label>
        <Choice
          label="Callback form"
          value={form.callback_form}
          options={CALLBACK_FORMS}
          set={(callback_form) => setForm({ ...form, callback_form })}
        />
        <button type="submit" disabled={register.busy}>
          Register operator
        </button>
      </form>
      <ErrorBox error={register.error} />
      {register.result ? (
        <Section
          id="h-new-op"
          level={3}
          title={`Operator ${register.result.operator_id} registered`}
          class="notice"
          testid="new-operator"
        >
          <p>Its bearer token and signing secret are shown only once:</p>
          <Terms
            rows={[
              ['API token', <code key="t">{register.result.api_token}</code>],
              ['Signing secret', <code key="s">{register.result.signing_secret}</code>],
            ]}
          />
        </Section>
      ) : null}
    </Page>
  );
}
