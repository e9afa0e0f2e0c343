/**
 * The ops console's pages (admin key as bearer): the log's topics and consumer groups, dead letters,
 * read-model rebuilds, edges, API keys and operators.
 */
import { useState } from 'preact/hooks';
import { ops } from './api.ts';
import { formatTime } from './format.ts';
import {
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

export function Topics() {
  const t = useLoad(() => ops<{ topics: Topic[] }>('GET', '/admin/ops/topics'), []);
  const topics = t.data?.topics ?? [];
  return (
    <Page title="Topics">
      <button type="button" onClick={() => t.reload(true)}>
        Refresh
      </button>
      <ErrorBox error={t.error} />
      {t.loading ? <Loading /> : null}
      <table data-testid="topics-table">
        <caption>{topics.length} topics, one row per partition</caption>
        <thead>
          <tr>
            <th scope="col">Topic</th>
            <th scope="col">Partition</th>
            <th scope="col">Leader</th>
            <th scope="col">Replicas</th>
            <th scope="col">In sync</th>
            <th scope="col">Low</th>
            <th scope="col">High</th>
          </tr>
        </thead>
        <tbody>
          {topics.flatMap((topic) =>
            topic.partitions.map((p) => (
              <tr key={`${topic.name}/${p.partition}`} data-topic={topic.name}>
                <th scope="row">{topic.name}</th>
                <td>{p.partition}</td>
                <td>{p.leader}</td>
                <td>{p.replicas.join(', ')}</td>
                <td>{p.isr.join(', ')}</td>
                <td>{p.low_water_mark}</td>
                <td>{p.high_water_mark}</td>
              </tr>
            )),
          )}
        </tbody>
      </table>
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
        <input
          type="checkbox"
          checked={paused}
          onChange={(e) => setPaused((e.currentTarget as HTMLInputElement).checked)}
        />{' '}
        Pause auto refresh
      </label>{' '}
      <span class="muted" data-testid="groups-updated">
        {updated ? `Updated ${formatTime(updated)}` : ''}
        {paused ? ' (paused)' : ' (every 2 s)'}
      </span>
      <ErrorBox error={g.error} />
      {g.loading ? <Loading /> : null}
      <table data-testid="groups-table">
        <caption>{groups.length} consumer groups, lag per partition</caption>
        <thead>
          <tr>
            <th scope="col">Group</th>
            <th scope="col">State</th>
            <th scope="col">Members</th>
            <th scope="col">Total lag</th>
            <th scope="col">Topic</th>
            <th scope="col">Partition</th>
            <th scope="col">Committed</th>
            <th scope="col">High</th>
            <th scope="col">Lag</th>
          </tr>
        </thead>
        <tbody>
          {groups.flatMap((grp) => {
            const rows = grp.topics.flatMap((t) => t.partitions.map((p) => ({ topic: t.topic, ...p })));
            if (rows.length === 0)
              return [
                <tr key={grp.group_id} data-group-id={grp.group_id}>
                  <th scope="row">{grp.group_id}</th>
                  <td>{grp.state}</td>
                  <td>{grp.members}</td>
                  <td>{grp.total_lag}</td>
                  <td colSpan={5}>no committed partitions</td>
                </tr>,
              ];
            return rows.map((p) => (
              <tr key={`${grp.group_id}/${p.topic}/${p.partition}`} data-group-id={grp.group_id}>
                <th scope="row">{grp.group_id}</th>
                <td>{grp.state}</td>
                <td>{grp.members}</td>
                <td>{grp.total_lag}</td>
                <td>{p.topic}</td>
                <td>{p.partition}</td>
                <td>{p.committed_offset ?? '—'}</td>
                <td>{p.high_water_mark}</td>
                <td class={p.lag > 0 ? 'warn' : ''}>{p.lag}</td>
              </tr>
            ));
          })}
        </tbody>
      </table>
    </Page>
  );
}

export function DeadLetters({ topic }: { topic: string }) {
  return topic ? <DeadLetterRecords topic={topic} /> : <DeadLetterTopics />;
}

function DeadLetterTopics() {
  const d = useLoad(
    () =>
      ops<{ topics: { topic: string; source_topic: string; count: number }[] }>(
        'GET',
        '/admin/ops/dead-letters',
      ),
    [],
  );
  const topics = d.data?.topics ?? [];
  return (
    <Page title="Dead letters">
      <ErrorBox error={d.error} />
      {d.loading ? <Loading /> : null}
      <table data-testid="dead-letters-table">
        <caption>Dead-letter topics</caption>
        <thead>
          <tr>
            <th scope="col">Topic</th>
            <th scope="col">Source topic</th>
            <th scope="col">Count</th>
          </tr>
        </thead>
        <tbody>
          {topics.map((t) => (
            <tr key={t.topic} data-topic={t.topic}>
              <th scope="row">
                <a href={`#/ops/dead-letters/${encodeURIComponent(t.topic)}`}>{t.topic}</a>
              </th>
              <td>{t.source_topic}</td>
              <td>{t.count}</td>
            </tr>
          ))}
        </tbody>
      </table>
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
  const [selected, setSelected] = useState<ReadonlySet<string>>(new Set());
  const [inspected, setInspected] = useState<DeadRecord | null>(null);
  const replay = useAction((records: Position[]) => ops<ReplayView>('POST', `${path}/replay`, { records }));
  const records = d.data?.records ?? [];
  const idOf = (r: DeadRecord) => `${r.partition}:${r.offset}`;
  return (
    <Page title={`Dead letters of ${topic}`}>
      <p>
        <a href="#/ops/dead-letters">Back to dead letters</a>
      </p>
      <button
        type="button"
        disabled={selected.size === 0 || replay.busy}
        onClick={async () => {
          const chosen = records.filter((r) => selected.has(idOf(r)));
          if (await replay.run(chosen.map((r) => ({ partition: r.partition, offset: r.offset })))) {
            setSelected(new Set());
            d.reload(true);
          }
        }}
      >
        Replay selected
      </button>
      <ErrorBox error={replay.error} />
      <p role="status" data-testid="replay-result">
        {replay.result ? replaySummary(replay.result) : ''}
      </p>
      <ErrorBox error={d.error} />
      {d.loading ? <Loading /> : null}
      <table data-testid="dead-letter-records-table">
        <caption>{records.length} records</caption>
        <thead>
          <tr>
            <th scope="col">Select</th>
            <th scope="col">Partition:offset</th>
            <th scope="col">Time</th>
            <th scope="col">Reason</th>
            <th scope="col">Source</th>
            <th scope="col">Replayed</th>
            <th scope="col">Inspect</th>
          </tr>
        </thead>
        <tbody>
          {records.map((r) => {
            const id = idOf(r);
            return (
              <tr key={id} data-record={id}>
                <td>
                  <input
                    type="checkbox"
                    aria-label={`Select ${id}`}
                    checked={selected.has(id)}
                    onChange={(e) => {
                      const next = new Set(selected);
                      if ((e.currentTarget as HTMLInputElement).checked) next.add(id);
                      else next.delete(id);
                      setSelected(next);
                    }}
                  />
                </td>
                <th scope="row">{id}</th>
                <td>{formatTime(r.timestamp)}</td>
                <td>{r.reason ?? '—'}</td>
                <td>
                  {r.source.topic === null
                    ? '—'
                    : `${r.source.topic} ${r.source.partition}:${r.source.offset}`}
                </td>
                <td>{r.replays && r.replays.length > 0 ? `yes (${r.replays.length})` : 'no'}</td>
                <td>
                  <button type="button" onClick={() => setInspected(r)}>
                    Inspect {id}
                  </button>
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
      {inspected ? (
        <section aria-labelledby="h-record" data-testid="dead-letter-record">
          <h2 id="h-record">Record {idOf(inspected)}</h2>
          <Pre value={inspected} />
        </section>
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

export function Rebuilds() {
  const [model, setModel] = useState('rounds');
  const list = useLoad(() => ops<{ rebuilds: Rebuild[] }>('GET', '/admin/ops/rebuilds'), []);
  const start = useAction((read_model: string) =>
    ops<Rebuild>('POST', '/admin/ops/rebuilds', { read_model }),
  );
  const swap = useAction((id: string) =>
    ops<Rebuild>('POST', `/admin/ops/rebuilds/${encodeURIComponent(id)}/swap`, {}),
  );
  const rebuilds = list.data?.rebuilds ?? [];
  useInterval(
    () => list.reload(true),
    REFRESH_MS,
    rebuilds.some((r) => r.state === 'running' || r.state === 'swapping'),
  );
  return (
    <Page title="Rebuilds">
      <form
        onSubmit={async (e) => {
          e.preventDefault();
          if (await start.run(model)) list.reload(true);
        }}
      >
        <label>
          Read model{' '}
          <select value={model} onChange={(e) => setModel((e.currentTarget as HTMLSelectElement).value)}>
            {READ_MODELS.map((m) => (
              <option key={m} value={m}>
                {m}
              </option>
            ))}
          </select>
        </label>{' '}
        <button type="submit" disabled={start.busy}>
          Start rebuild
        </button>
      </form>
      <ErrorBox error={start.error} />
      <ErrorBox error={swap.error} />
      <ErrorBox error={list.error} />
      {list.loading ? <Loading /> : null}
      <table data-testid="rebuilds-table">
        <caption>Rebuilds (refreshed every 2 s while one runs)</caption>
        <thead>
          <tr>
            <th scope="col">Id</th>
            <th scope="col">Read model</th>
            <th scope="col">State</th>
            <th scope="col">Progress</th>
            <th scope="col">Started</th>
            <th scope="col">Error</th>
            <th scope="col">Swap</th>
          </tr>
        </thead>
        <tbody>
          {rebuilds.map((r) => (
            <tr key={r.rebuild_id} data-rebuild-id={r.rebuild_id}>
              <th scope="row">{r.rebuild_id}</th>
              <td>{r.read_model}</td>
              <td>{r.state}</td>
              <td>{progressText(r.progress)}</td>
              <td>{formatTime(r.started_at)}</td>
              <td>{r.error ? `${r.error.code}: ${r.error.message}` : ''}</td>
              <td>
                <button
                  type="button"
                  aria-label={`Swap ${r.rebuild_id}`}
                  disabled={r.state !== 'caught-up' || swap.busy}
                  onClick={async () => {
                    if (await swap.run(r.rebuild_id)) list.reload(true);
                  }}
                >
                  Swap
                </button>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
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

export function Edges() {
  const e = useLoad(() => ops<{ edges: Edge[] }>('GET', '/admin/ops/edges'), []);
  const edges = e.data?.edges ?? [];
  return (
    <Page title="Edges">
      <button type="button" onClick={() => e.reload(true)}>
        Refresh
      </button>
      <ErrorBox error={e.error} />
      {e.loading ? <Loading /> : null}
      <table data-testid="edges-table">
        <caption>Edges and their subscribers per protocol</caption>
        <thead>
          <tr>
            <th scope="col">URL</th>
            <th scope="col">Ready</th>
            <th scope="col">WebSocket</th>
            <th scope="col">SSE</th>
            <th scope="col">gRPC</th>
            <th scope="col">WebTransport</th>
          </tr>
        </thead>
        <tbody>
          {edges.map((x) => (
            <tr key={x.url}>
              <th scope="row">{x.url}</th>
              <td>
                <Ok ok={x.ready} yes="ready" no="not ready" />
                {x.error ? ` (${x.error})` : ''}
              </td>
              <td>{x.subscribers?.websocket ?? '—'}</td>
              <td>{x.subscribers?.sse ?? '—'}</td>
              <td>{x.subscribers?.grpc ?? '—'}</td>
              <td>{x.subscribers?.webtransport ?? '—'}</td>
            </tr>
          ))}
        </tbody>
      </table>
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
  const [chosen, setChosen] = useState<ReadonlySet<string>>(new Set(['read:rounds']));
  const create = useAction((body: { name: string; scopes: string[] }) =>
    ops<{ key: Key; secret: string }>('POST', '/api/auth/keys', { ...body, kind: 'private' }),
  );
  const revoke = useAction((id: string) =>
    ops<{ key: Key }>('POST', `/api/auth/keys/${encodeURIComponent(id)}/revoke`, {}),
  );
  const keys = list.data?.keys ?? [];
  return (
    <Page title="API keys">
      <ErrorBox error={revoke.error} />
      <ErrorBox error={list.error} />
      {list.loading ? <Loading /> : null}
      <table data-testid="keys-table">
        <caption>{keys.length} keys</caption>
        <thead>
          <tr>
            <th scope="col">Id</th>
            <th scope="col">Name</th>
            <th scope="col">Kind</th>
            <th scope="col">Scopes</th>
            <th scope="col">Created</th>
            <th scope="col">Revoked</th>
            <th scope="col">Last used</th>
            <th scope="col">Revoke</th>
          </tr>
        </thead>
        <tbody>
          {keys.map((k) => (
            <tr key={k.id} data-key-id={k.id}>
              <th scope="row">
                <code>{k.id}</code>
              </th>
              <td>{k.name}</td>
              <td>{k.kind}</td>
              <td>{k.scopes.join(' ')}</td>
              <td>{formatTime(k.created_at)}</td>
              <td>{formatTime(k.revoked_at)}</td>
              <td>{formatTime(k.last_used)}</td>
              <td>
                <button
                  type="button"
                  aria-label={`Revoke ${k.id}`}
                  disabled={k.revoked_at !== null || revoke.busy}
                  onClick={async () => {
                    if (await revoke.run(k.id)) list.reload(true);
                  }}
                >
                  Revoke
                </button>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      <h2>Create a key</h2>
      <form
        onSubmit={async (e) => {
          e.preventDefault();
          if (await create.run({ name, scopes: [...chosen] })) list.reload(true);
        }}
      >
        <label>
          Name{' '}
          <input
            required
            maxLength={128}
            value={name}
            onInput={(e) => setName((e.currentTarget as HTMLInputElement).value)}
          />
        </label>
        <fieldset>
          <legend>Scopes</legend>
          <ErrorBox error={scopes.error} />
          {(scopes.data?.scopes ?? []).map((s) => (
            <label key={s.name} class="inline">
              <input
                type="checkbox"
                checked={chosen.has(s.name)}
                onChange={(e) => {
                  const next = new Set(chosen);
                  if ((e.currentTarget as HTMLInputElement).checked) next.add(s.name);
                  else next.delete(s.name);
                  setChosen(next);
                }}
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
        <section aria-labelledby="h-new-key" class="notice">
          <h3 id="h-new-key">Key {create.result.key.id} created</h3>
          <p>Its secret is shown only once:</p>
          <p>
            <code data-testid="new-key-secret">{create.result.secret}</code>
          </p>
        </section>
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
  const register = useAction((body: typeof form) =>
    ops<OperatorRow & { api_token: string; signing_secret: string }>('POST', '/admin/operators', body),
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
  const input = (k: 'name' | 'base_url') => ({
    value: form[k],
    onInput: (e: Event) => setForm({ ...form, [k]: (e.currentTarget as HTMLInputElement).value }),
  });
  return (
    <Page title="Operators">
      <ErrorBox error={list.error} />
      {list.loading ? <Loading /> : null}
      <table data-testid="operators-table">
        <caption>{operators.length} operators</caption>
        <thead>
          <tr>
            <th scope="col">Id</th>
            <th scope="col">Name</th>
            <th scope="col">Form</th>
            <th scope="col">Base URL</th>
            <th scope="col">Ready</th>
            <th scope="col">Actions</th>
          </tr>
        </thead>
        <tbody>
          {operators.map((o) => (
            <tr key={o.operator_id} data-operator-id={o.operator_id}>
              <th scope="row">
                <code>{o.operator_id}</code>
              </th>
              <td>{o.name}</td>
              <td>{o.callback_form}</td>
              <td>{o.base_url}</td>
              <td>{o.readiness ? <Ok ok={o.readiness.ready} yes="ready" no="not ready" /> : 'not probed'}</td>
              <td>
                <button
                  type="button"
                  aria-label={`Readiness of ${o.operator_id}`}
                  disabled={probe.busy}
                  onClick={() => probe.run(o.operator_id)}
                >
                  Readiness
                </button>{' '}
                <button
                  type="button"
                  aria-label={`Portal link for ${o.operator_id}`}
                  disabled={link.busy}
                  onClick={() => link.run(o.operator_id)}
                >
                  Portal link
                </button>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      <ErrorBox error={probe.error} />
      {probe.busy ? <Loading /> : null}
      {probe.result ? (
        <section aria-labelledby="h-probe">
          <h2 id="h-probe">Readiness of {probe.result.operator_id}</h2>
          <ReadinessTable readiness={probe.result.readiness} />
        </section>
      ) : null}
      <ErrorBox error={link.error} />
      {link.result ? (
        <section aria-labelledby="h-link" class="notice">
          <h2 id="h-link">Portal link for {link.result.operator_id}</h2>
          <p>
            Single use, valid until {formatTime(link.result.expires_at)}:{' '}
            <a data-testid="portal-link" href={link.result.url}>
              {link.result.url}
            </a>
          </p>
        </section>
      ) : null}
      <h2>Register an operator</h2>
      <form
        class="grid-form"
        onSubmit={async (e) => {
          e.preventDefault();
          if (await register.run(form)) list.reload(true);
        }}
      >
        <label>
          Name <input required {...input('name')} />
        </label>
        <label>
          Base URL{' '}
          <input required type="url" placeholder="https://wallet.example.com" {...input('base_url')} />
        </label>
        <label>
          Callback form{' '}
          <select
            value={form.callback_form}
            onChange={(e) =>
              setForm({ ...form, callback_form: (e.currentTarget as HTMLSelectElement).value })
            }
          >
            <option value="A">A</option>
            <option value="B">B</option>
          </select>
        </label>
        <button type="submit" disabled={register.busy}>
          Register operator
        </button>
      </form>
      <ErrorBox error={register.error} />
      {register.result ? (
        <section aria-labelledby="h-new-op" class="notice" data-testid="new-operator">
          <h3 id="h-new-op">Operator {register.result.operator_id} registered</h3>
          <p>Its bearer token and signing secret are shown only once:</p>
          <dl>
            <dt>API token</dt>
            <dd>
              <code>{register.result.api_token}</code>
            </dd>
            <dt>Signing secret</dt>
            <dd>
              <code>{register.result.signing_secret}</code>
            </dd>
          </dl>
        </section>
      ) : null}
    </Page>
  );
}
