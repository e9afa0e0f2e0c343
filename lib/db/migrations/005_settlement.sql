-- Owner: settlement_bets, settlement_rounds, settlement_outbox  services/settlement
-- durable state of the settlement processor (services/settlement), written in the same
-- statement as its checkpoints in projection_checkpoints (projection 'settlement'), so a SIGKILL and
-- restart re-processes records without settling a bet twice (docs/decisions/money/0004-settlement-durable-state.md).
--   settlement_bets    one row per bet tx_id: the BetPlaced value and the decide/evolve state
--                      (rules/bets/settle.ts) as JSON; status placed|counted are the open bets.
--   settlement_rounds  recent finished rounds per game (pruned by finished_at), so a bet consumed after
--                      its round is still joined.
--   settlement_outbox  events settlement decided and committed but has not yet read back from
--                      wallet-transactions; on start-up the ones not found in the log are sent again.
create table settlement_bets (
  tx_id      bigint primary key,
  game       text not null,
  round_id   bigint not null,
  status     text not null check (status in ('placed', 'counted', 'settled', 'rejected', 'cancelled')),
  state      jsonb not null,
  updated_at timestamptz not null default now()
);
create index settlement_bets_open on settlement_bets (game, round_id) where status in ('placed', 'counted');

create table settlement_rounds (
  game        text not null,
  round_id    bigint not null,
  finished_at bigint not null,
  result      jsonb not null,
  primary key (game, round_id)
);

create table settlement_outbox (
  type       text not null,
  tx_id      bigint not null,
  key        text not null,
  value      bytea not null,
  created_at timestamptz not null default now(),
  primary key (type, tx_id)
);
