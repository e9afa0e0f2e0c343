/**
 * The console's entry: hash routing between the home page, the operator portal (cookie session from a
 * single-use link) and the ops console (admin key), each with its header, navigation and main landmark.
 */
import type { ComponentChildren } from 'preact';
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
import { ErrorBox, Loading, Page } from './ui.tsx';

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

function NavLink({
  href,
  current,
  children,
}: {
  href: string;
  current: boolean;
  children: ComponentChildren;
}) {
  return (
    <li>
      <a href={href} aria-current={current ? 'page' : undefined}>
        {children}
      </a>
    </li>
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

const PORTAL_NAV: [string, string][] = [
  ['overview', 'Overview'],
  ['callbacks', 'Callbacks'],
  ['conformance', 'Conformance'],
  ['secret', 'Secret'],
  ['settings', 'Settings'],
  ['reconciliation', 'Reconciliation'],
];

const OPS_NAV: [string, string][] = [
  ['topics', 'Topics'],
  ['groups', 'Consumer groups'],
  ['dead-letters', 'Dead letters'],
  ['rebuilds', 'Rebuilds'],
  ['edges', 'Edges'],
  ['keys', 'API keys'],
  ['operators', 'Operators'],
];

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
      nav={
        <nav aria-label="Portal">
          <ul>
            {PORTAL_NAV.map(([page, label]) => (
              <NavLink key={page} href={`#/portal/${page}`} current={route.page === page}>
                {label}
              </NavLink>
            ))}
          </ul>
        </nav>
      }
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
      <PortalPage route={route} />
    </Shell>
  );
}

function PortalPage({ route }: { route: Route }) {
  switch (route.page) {
    case 'callbacks':
      return route.arg ? <CallbackDetail txId={route.arg} /> : <Callbacks />;
    case 'conformance':
      return <Conformance />;
    case 'secret':
      return <Secret />;
    case 'settings':
      return <Settings />;
    case 'reconciliation':
      return <ReconciliationPage />;
    default:
      return <Overview />;
  }
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
              Admin key{' '}
              <input
                type="password"
                autoComplete="off"
                required
                value={draft}
                onInput={(e) => setDraft((e.currentTarget as HTMLInputElement).value)}
              />
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
      nav={
        <nav aria-label="Ops">
          <ul>
            {OPS_NAV.map(([page, label]) => (
              <NavLink key={page} href={`#/ops/${page}`} current={route.page === page}>
                {label}
              </NavLink>
            ))}
          </ul>
        </nav>
      }
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
      <OpsPage route={route} />
    </Shell>
  );
}

function OpsPage({ route }: { route: Route }) {
  switch (route.page) {
    case 'groups':
      return <Groups />;
    case 'dead-letters':
      return <DeadLetters topic={route.arg} />;
    case 'rebuilds':
      return <Rebuilds />;
    case 'edges':
      return <Edges />;
    case 'keys':
      return <Keys />;
    case 'operators':
      return <Operators />;
    default:
      return <Topics />;
  }
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
