-- The reference operator's own ledger, in its own schema (SANDBOX_DB_SCHEMA), never
-- read by the platform: the tests compare it with the platform's read models through /_sandbox/ledger.
--   accounts      one row per (user_id, currency), created at first sight with SANDBOX_INITIAL_BALANCE;
--                 every movement locks its row (select ... for update), so movements of one player are
--                 serial and a balance never goes below zero.
--   transactions  one row per accepted bet, win or rollback, unique on (kind, provider_tx_id): the
--                 idempotency key. body_hash detects the same id with another body (409); response is
--                 the first answer as JSON text (text keeps its key order), returned again on a replay. A rollback of an unknown bet is stored
--                 with delta 0 and linked_tx_id set, so the late bet is refused (409 BET_ROLLED_BACK).
-- Amounts are bigint minor units; provider ids are text because form B sends them as strings.

create table accounts (
  user_id        text not null,
  currency       text not null,
  balance_minor  bigint not null check (balance_minor >= 0),
  created_at     timestamptz not null default now(),
  updated_at     timestamptz not null default now(),
  primary key (user_id, currency)
);

create table transactions (
  operator_tx_id  bigserial primary key,
  kind            text not null check (kind in ('bet', 'win', 'rollback')),
  provider_tx_id  text not null,
  user_id         text not null,
  currency        text not null,
  linked_tx_id    text,
  amount_minor    bigint not null check (amount_minor >= 0),
  delta_minor     bigint not null,
  round_id        text not null,
  game            text not null,
  body_hash       text not null,
  response        text not null,
  created_at      timestamptz not null default now(),
  unique (kind, provider_tx_id),
  foreign key (user_id, currency) references accounts (user_id, currency)
);
create index transactions_account on transactions (user_id, currency, operator_tx_id);
create index transactions_linked on transactions (linked_tx_id) where linked_tx_id is not null;
create index transactions_round on transactions (user_id, currency, game, round_id) where kind = 'bet';
