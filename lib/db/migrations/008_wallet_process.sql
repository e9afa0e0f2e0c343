-- Owners: wallet_bets, wallet_callbacks, wallet_outbox, operator_breakers  services/wallet-saga
--         operators (columns answer_table, round_close, round_end_path)    services/api
-- the wallet saga as a per-bet process manager (rules/wallet/process.ts) with durable
-- callbacks (docs/decisions/money/0002-durable-callbacks-leases-and-fencing.md).
--   wallet_bets        one row per real-money bet: the process state (jsonb), written by the saga's
--                      wallet-transactions consumer in the same statement as its checkpoint
--                      (projection 'wallet-saga' in projection_checkpoints).
--   wallet_callbacks   every callback the processes asked for, keyed by its provider_tx_id: its
--                      status (due → in_flight → done | parked | skipped), attempts, the time of
--                      the next attempt (Unix ms, following the operator's retry schedule), the lease
--                      of the dispatcher instance sending it, and the last request and answer for
--                      ops. Rows are inserted by the consumer (on conflict do nothing) and moved on by
--                      the dispatchers, any number of them, each leasing rows with FOR UPDATE SKIP
--                      LOCKED. A bet row is leased only when no earlier debit of the same player is
--                      due or in flight; a win, rollback or close only when its bet's debit is not.
--   wallet_outbox      events decided (by the consumer or a dispatcher) and committed with the state
--                      that decided them, appended to wallet-transactions after the commit and then
--                      deleted; rows older than a few seconds are appended again by the relay.
--   operator_breakers  the circuit breaker of each operator: closed, or open until a half-open
--                      balance probe succeeds (probe: the player, currency and session of the
--                      last failed bet, whose balance the probe asks); the API reads it before
--                      taking a bet.
create table wallet_bets (
  tx_id       bigint primary key,
  player_key  text not null,
  state       jsonb not null,
  finished    boolean not null default false,
  updated_at  timestamptz not null default now()
);

create table wallet_callbacks (
  tx_id            bigint primary key,
  kind             text not null check (kind in ('bet', 'win', 'rollback', 'close')),
  bet_tx_id        bigint not null,
  operator_id      text not null,
  user_id          text not null,
  player_key       text not null,
  seq              bigint not null,
  job              jsonb not null,
  status           text not null check (status in ('due', 'in_flight', 'done', 'parked', 'skipped')),
  attempts         int not null default 0,
  next_attempt_at  bigint not null,
  lease_until      bigint,
  leased_by        text,
  created_at       bigint not null,
  updated_at       bigint not null,
  last_answer      text,
  last_code        text,
  last_error       text,
  last_request     text,
  last_response    text
);
create index wallet_callbacks_due on wallet_callbacks (next_attempt_at) where status in ('due', 'in_flight');
create index wallet_callbacks_debits on wallet_callbacks (player_key, seq)
  where kind = 'bet' and status in ('due', 'in_flight');
create index wallet_callbacks_ops on wallet_callbacks (operator_id, status, updated_at);
create index wallet_callbacks_player on wallet_callbacks (user_id, operator_id);

create table wallet_outbox (
  id          bigserial primary key,
  key         text not null,
  value       bytea not null,
  created_at  timestamptz not null default now()
);

create table operator_breakers (
  operator_id   text primary key,
  state         text not null check (state in ('closed', 'open')),
  failures      int not null default 0,
  opened_at     bigint,
  retry_at      bigint,
  last_error    text,
  probe         jsonb,
  updated_at    bigint not null
);

alter table operators
  add column answer_table   jsonb not null default '"seed"',
  add column round_close    text not null default 'zero-win' check (round_close in ('zero-win', 'round-end', 'none')),
  add column round_end_path text;

-- A lost bet's round close is a row of its own in the wallet read model (tx_id = bet + 1).
alter table wallet_transactions drop constraint wallet_transactions_kind_check;
alter table wallet_transactions add constraint wallet_transactions_kind_check
  check (kind in ('bet', 'win', 'rollback', 'close'));
