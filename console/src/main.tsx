/**
 * The console's entry: hash routing between the home page, the operator portal (cookie session from a
 * single-use link) and the ops console (admin key), each with its header, navigation and main landmark.
 */
import type { ComponentChildren, JSX } from 'preact';
import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { ApiError, adminKey, ops, PORTAL_SIGNED_OUT, portal, setAdminKey, setCsrfToken } from './api.ts';
import { formatTime, linkTokenOf, parseRoute, type Route } from './format.ts';
import { DeadLetters, Edges, Groups, Keys, Operators, Rebuilds, Topics } from './ops.tsx';
import {
  CallbackDetail,
  Callbacks,
  Conformance,
  Overview,
  ReconciliationPage,
  Secret,
  Settings,
} from './portal.tsx';
import { bindText, ErrorBox, Loading, Page } from './ui.tsx';

interface PortalSession {
  operator_id: string;
  name: string;
  csrf_token: string;
  expires_at: string;
}

/** The current hash route, updated on hashchange. */
function useRoute(): Route {
  const [route, setRoute] = useState(() => parseRoute(location.hash));
  useEffect(() => {
    const on = () => setRoute(parseRoute(location.hash));
    window.addEventListener('hashchange', on);
    return () => window.removeEventListener('hashchange', on);
  }, []);
  return route;
}

/** An area's navigation (named `name`): one link per `[page, label]`, the current one marked. */
function AreaNav({
  name,
  base,
  pages,
  current,
}: {
  name: string;
  base: string;
  pages: readonly AreaPage[];
  current: string;
}) {
  return (
    <nav aria-label={name}>
      <ul>
        {pages.map(([page, label]) => (
          <li key={page}>
            <a href={`${base}/${page}`} aria-current={current === page ? 'page' : undefined}>
              {label}
            </a>
          </li>
        ))}
      </ul>
    </nav>
  );
}

function Shell({
  area,
  nav,
  right,
  children,
}: {
  area: string;
  nav?: ComponentChildren;
  right?: ComponentChildren;
  children: ComponentChildren;
}) {
  return (
    <>
      <header class="top">
        <p class="brand">
          <a href="#/">Console</a> <span class="muted">· {area}</span>
        </p>
        {nav}
        <div class="right">{right}</div>
      </header>
      <main id="main" tabIndex={-1}>
        {children}
      </main>
    </>
  );
}

/** A page of an area: its name in the route, its navigation label, its view of the route's argument. */
type AreaPage = readonly [page: string, label: string, view: (arg: string) => JSX.Element];

const PORTAL_PAGES: readonly AreaPage[] = [
  ['overview', 'Overview', () => <Overview />],
  ['callbacks', 'Callbacks', (arg) => (arg ? <CallbackDetail key={arg} txId={arg} /> : <Callbacks />)],
  ['conformance', 'Conformance', () => <Conformance />],
  ['secret', 'Secret', () => <Secret />],
  ['settings', 'Settings', () => <Settings />],
  ['reconciliation', 'Reconciliation', () => <ReconciliationPage />],
];

const OPS_PAGES: readonly AreaPage[] = [
  ['topics', 'Topics', () => <Topics />],
  ['groups', 'Consumer groups', () => <Groups />],
  ['dead-letters', 'Dead letters', (arg) => <DeadLetters topic={arg} />],
  ['rebuilds', 'Rebuilds', () => <Rebuilds />],
  ['edges', 'Edges', () => <Edges />],
  ['keys', 'API keys', () => <Keys />],
  ['operators', 'Operators', () => <Operators />],
];

/** The view of the route's page among `pages` (the first, the area's default, for any other). */
function AreaView({ pages, route }: { pages: readonly AreaPage[]; route: Route }) {
  const [, , view] = pages.find(([page]) => page === route.page) ?? (pages[0] as AreaPage);
  return view(route.arg);
}

type SessionState =
  | { readonly kind: 'checking' }
  | { readonly kind: 'none'; readonly error: unknown }
  | { readonly kind: 'ok'; readonly session: PortalSession };

/**
 * A `#portal-link=<token>` hash is read once at start and removed from the URL (and its history
 * entry) before anything else, so the single-use token is not kept in the address bar or history.
 */
let pendingLinkToken = linkTokenOf(location.hash);
if (pendingLinkToken !== null)
  history.replaceState(null, '', `${location.pathname}${location.search}#/portal/overview`);

function PortalArea({ route }: { route: Route }) {
  const [state, setState] = useState<SessionState>({ kind: 'checking' });
  useEffect(() => {
    // The token is single-use: spent by the first login, never sent again.
    const token = pendingLinkToken;
    pendingLinkToken = null;
    const login = token
      ? portal<PortalSession>('POST', '/api/portal/session', { link_token: token })
      : portal<PortalSession>('GET', '/api/portal/session');
    login.then(
      (session) => {
        setCsrfToken(session.csrf_token);
        setState({ kind: 'ok', session });
      },
      // A missing session (401 on the GET) is no error to show; a refused link is.
      (e: unknown) =>
        setState({
          kind: 'none',
          error: token || !(e instanceof ApiError && e.status === 401) ? e : null,
        }),
    );
  }, []);
  useEffect(() => {
    // A session that ended meanwhile (expired, signed out elsewhere): back to the sign-in, saying why.
    const out = (e: Event) => {
      setCsrfToken(null);
      setState({ kind: 'none', error: (e as CustomEvent).detail });
    };
    window.addEventListener(PORTAL_SIGNED_OUT, out);
    return () => window.removeEventListener(PORTAL_SIGNED_OUT, out);
  }, []);
  if (state.kind === 'checking')
    return (
      <Shell area="Operator portal">
        <Loading />
      </Shell>
    );
  if (state.kind === 'none')
    return (
      <Shell area="Operator portal">
        <Page title="Operator portal sign-in">
          <ErrorBox error={state.error} />
          <p>
            You are not signed in. Open the single-use portal link your platform contact sent you (it looks
            like <code>/console/#portal-link=plk_…</code>); ask for a new one when it has expired or was used.
          </p>
        </Page>
      </Shell>
    );
  const s = state.session;
  const signOut = async () => {
    try {
      await portal('DELETE', '/api/portal/session');
    } catch {
      // Signed out locally either way: the cookie expires with its session.
    }
    setCsrfToken(null);
    setState({ kind: 'none', error: null });
  };
  return (
    <Shell
      area="Operator portal"
      nav={<AreaNav name="Portal" base="#/portal" pages={PORTAL_PAGES} current={route.page} />}
      right={
        <>
          <span class="muted">
            {s.name} · session until {formatTime(s.expires_at)}
          </span>{' '}
          <button type="button" onClick={signOut}>
            Sign out
          </button>
        </>
      }
    >
      <AreaView pages={PORTAL_PAGES} route={route} />
    </Shell>
  );
}

function OpsArea({ route }: { route: Route }) {
  const [key, setKey] = useState(adminKey);
  const [draft, setDraft] = useState('');
  const [error, setError] = useState<unknown>(null);
  const [checking, setChecking] = useState(false);
  if (!key)
    return (
      <Shell area="Ops console">
        <Page title="Ops console sign-in">
          <p>
            The admin API key (<code>npm run admin-key -- create --name &lt;name&gt;</code>). It is kept in
            this tab only (sessionStorage) and sent as a bearer.
          </p>
          <form
            onSubmit={async (e) => {
              e.preventDefault();
              setChecking(true);
              setAdminKey(draft.trim());
              try {
                // Checked once here so a wrong key is told at once, not on every page.
                await ops('GET', '/admin/operators');
                setError(null);
                setKey(draft.trim());
                setDraft('');
              } catch (err) {
                setAdminKey(null);
                setError(err);
              } finally {
                setChecking(false);
              }
            }}
          >
            <label>
              Admin key <input type="password" autoComplete="off" required {...bindText(draft, setDraft)} />
            </label>{' '}
            <button type="submit" disabled={checking}>
              Sign in
            </button>
          </form>
          <ErrorBox error={error} />
        </Page>
      </Shell>
    );
  return (
    <Shell
      area="Ops console"
      nav={<AreaNav name="Ops" base="#/ops" pages={OPS_PAGES} current={route.page} />}
      right={
        <button
          type="button"
          onClick={() => {
            setAdminKey(null);
            setKey(null);
          }}
        >
          Sign out
        </button>
      }
    >
      <AreaView pages={OPS_PAGES} route={route} />
    </Shell>
  );
}

function Home() {
  return (
    <Shell area="Home">
      <Page title="Console">
        <ul class="cards">
          <li>
            <a href="#/portal/overview">Operator portal</a>
            <p>
              For an operator: callbacks, conformance, signing secret, settings and reconciliation. Signed in
              by a single-use link.
            </p>
          </li>
          <li>
            <a href="#/ops/topics">Ops console</a>
            <p>
              For the platform's operations: topics, consumer groups, dead letters, rebuilds, edges, API keys
              and operators. Signed in with the admin key.
            </p>
          </li>
        </ul>
      </Page>
    </Shell>
  );
}

function App() {
  const route = useRoute();
  if (route.area === 'portal') return <PortalArea route={route} />;
  if (route.area === 'ops') return <OpsArea route={route} />;
  return <Home />;
}

const root = document.getElementById('app');
if (root) render(<App />, root);
