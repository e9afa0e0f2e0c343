-- Owner: access_round_bets  services/api
-- The api (access): the per-round bet counter behind count_register ("the player's number of
-- bets in the round", docs/contract.md "Operator callbacks"). The api increments it atomically when it accepts a bet
-- (insert ... on conflict do update ... returning), so two simultaneous bets of one player never
-- get the same number, which a count over the asynchronously projected wallet_transactions could
-- not promise. One row per player and round; rows of old rounds are never read again.
create table access_round_bets (
  operator_id  text not null,
  user_id      text not null,
  round_id     bigint not null,
  bets         int not null check (bets >= 0),
  primary key (operator_id, user_id, round_id)
);
