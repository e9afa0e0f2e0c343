-- Owner: settlement_closes, settlement_cash_outs  services/settlement
-- what settlement reads of a round's lifecycle on `rounds`, written in the same statement
-- as its checkpoints, so a restart re-processes records without deciding twice:
--   settlement_closes     the broker append time of each round's BettingClosed (Unix ms): a bet
--                         whose BetPlaced was appended at or after it is cancelled, never settled.
--   settlement_cash_outs  each manual cash-out the round engine decided (BetCashedOut): the
--                         multiplier settlement pays that bet.
create table settlement_closes (
  game        text not null,
  round_id    bigint not null,
  closed_at   bigint not null,
  primary key (game, round_id)
);

create table settlement_cash_outs (
  tx_id       bigint primary key,
  game        text not null,
  round_id    bigint not null,
  multiplier  text not null,
  decided_at  bigint not null
);
