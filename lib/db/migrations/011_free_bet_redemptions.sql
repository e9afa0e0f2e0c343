-- Owner: free_bet_redemptions  services/api
-- a free bet is registered at the operator as a bet that moves no money. Each
-- redemption of a grant (free_bets) by a bet is kept here; when the bet is rejected (the operator
-- refused its registration, or settlement cancelled it), the API's free-bet-returns consumer gives
-- the grant its free bet back once (returned_at), in the same statement as its checkpoint.
create table free_bet_redemptions (
  tx_id        bigint primary key,
  grant_id     bigint not null references free_bets (grant_id),
  redeemed_at  timestamptz not null default now(),
  returned_at  timestamptz
);
create index free_bet_redemptions_grant on free_bet_redemptions (grant_id);
