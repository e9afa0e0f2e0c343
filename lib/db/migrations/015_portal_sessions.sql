-- Owners: portal_links, portal_sessions  services/api (services/api/portal); the index
--         wallet_transactions_operator_day (its table is the wallet projection's)
-- The operator portal's sign-in (docs/decisions/console/0002-portal-sessions.md):
--   portal_links     single-use sign-in links minted by an admin (POST /admin/operators/:id/portal-link):
--                    only the SHA-256 of the `plk_` token is kept; the exchange (POST /api/portal/session)
--                    spends a link with one conditional update (used_at is null and not expired), so of
--                    two simultaneous exchanges exactly one wins.
--   portal_sessions  the sessions those exchanges open: the SHA-256 of the cookie's session id, the
--                    operator it sees, its CSRF token (sent back in x-csrf-token on every write) and
--                    its end; ended_at is set by sign-out.
create table portal_links (
  token_hash   text primary key,
  operator_id  text not null references operators (operator_id),
  created_at   timestamptz not null default now(),
  expires_at   timestamptz not null,
  used_at      timestamptz
);
create index portal_links_operator on portal_links (operator_id);

create table portal_sessions (
  session_hash text primary key,
  operator_id  text not null references operators (operator_id),
  csrf_token   text not null,
  created_at   timestamptz not null default now(),
  expires_at   timestamptz not null,
  ended_at     timestamptz
);
create index portal_sessions_operator on portal_sessions (operator_id);

-- The portal's reconciliation reads one operator's wallet transactions of one UTC day.
create index wallet_transactions_operator_day on wallet_transactions (operator_id, requested_at);
