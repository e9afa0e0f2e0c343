-- Owners: operators, access_sessions, free_bets, wallet_tx_seq  services/api
--         wallet_transactions, wallet_balances                  services/projector (wallet projection)
-- game access sessions, operators, free bets and the wallet read models.
--
-- Write side (the api writes these directly, because each holds an atomic check that a log cannot
-- give; the resulting events still go to the log, docs/decisions/rest-api/0005-session-api.md):
--   operators        admin-managed registry: bearer credential hash, callback configuration,
--                    signing secret (Standard Webhooks whsec_), timeout and retry policy.
--   access_sessions  one row per POST /games/request-access; the game URL's one-time launch code is
--                    consumed by a conditional update (opened_at is null), so of two simultaneous
--                    first opens exactly one wins.
--   free_bets        grants of POST /games/free-bets; a free bet takes one with a conditional
--                    decrement of quantity_left.
--   wallet_tx_seq    bet provider_tx_ids: nextval * 4; its win is +1, its rollback +2.
-- Read side (only the wallet projector writes them, from the wallet-transactions topic, with its
-- checkpoint in projection_checkpoints in the same statement):
--   wallet_transactions, wallet_balances.
-- Amounts are bigint minor units (exponent 2); balances as the operator answered (decimal strings).

create table operators (
  operator_id     text primary key,
  name            text not null,
  token_hash      text not null unique,
  callback_form   text not null check (callback_form in ('A', 'B')),
  base_url        text not null,
  bet_path        text not null,
  win_path        text not null,
  balance_path    text not null,
  rollback_path   text not null,
  signing_secret  text not null,
  timeout_ms      int not null check (timeout_ms between 100 and 60000),
  retry_policy    jsonb not null,
  created_at      timestamptz not null default now(),
  disabled_at     timestamptz
);

create table access_sessions (
  session_id        uuid primary key,
  operator_id       text not null references operators (operator_id),
  game              text not null,
  user_id           text not null,
  username          text not null,
  avatar_url        text,
  lang              text,
  currency          text not null,
  balance_minor     bigint,
  extra_data        text,
  demo              boolean not null,
  demo_session      boolean not null,
  session_token     text not null unique,
  launch_hash       text not null unique,
  player_token_hash text unique,
  expires_at        timestamptz not null,
  created_at        timestamptz not null,
  opened_at         timestamptz,
  ended_at          timestamptz
);
create index access_sessions_active on access_sessions (operator_id, opened_at) where ended_at is null;

create table free_bets (
  grant_id        bigserial primary key,
  operator_id     text not null references operators (operator_id),
  user_id         text not null,
  game            text not null,
  currency        text not null,
  value_minor     bigint not null check (value_minor > 0),
  quantity        int not null check (quantity > 0),
  quantity_left   int not null check (quantity_left >= 0),
  bonus_code      text,
  expires_at      timestamptz not null,
  created_at      timestamptz not null default now()
);
create index free_bets_user on free_bets (operator_id, user_id, game);

create sequence wallet_tx_seq;

create table wallet_transactions (
  tx_id           bigint primary key,
  bet_tx_id       bigint not null,
  kind            text not null check (kind in ('bet', 'win', 'rollback')),
  session_id      uuid not null,
  operator_id     text not null,
  user_id         text not null,
  currency        text not null,
  game            text not null,
  round_id        bigint not null,
  amount_minor    bigint not null,
  mode            text not null,
  demo            boolean not null,
  status          text not null check (status in ('pending', 'succeeded', 'rejected', 'failed', 'parked')),
  round_status    text not null check (round_status in ('open', 'won', 'lost', 'cancelled')),
  requested_at    timestamptz not null,
  updated_at      timestamptz not null,
  operator_tx_id  text,
  old_balance     text,
  new_balance     text,
  attempts        int not null default 0,
  detail          text
);
create index wallet_transactions_session on wallet_transactions (session_id, requested_at, tx_id);
create index wallet_transactions_bet on wallet_transactions (bet_tx_id);

create table wallet_balances (
  operator_id     text not null,
  user_id         text not null,
  currency        text not null,
  balance         text not null,
  updated_at      timestamptz not null,
  primary key (operator_id, user_id, currency)
);
