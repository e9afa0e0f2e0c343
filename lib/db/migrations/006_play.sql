-- Owner: play_bets, demo_wallets  services/api
-- what the API needs to decide a player's next request at once, atomically, without the
-- asynchronously projected wallet_transactions:
--   play_bets     one row per accepted bet (its round, stake and auto cash-out), and the manual
--                 cash-out claimed on it: a conditional update (cash_out is null) lets exactly one of
--                 two simultaneous cash-out requests ask the round engine.
--   demo_wallets  the stakes a demo session has bet (debited_minor); a demo bet takes its stake with
--                 one conditional upsert that never lets the balance (start + wins + refunds from the
--                 read model - debited) go below zero, whatever the concurrency.
create table play_bets (
  tx_id               bigint primary key,
  session_id          uuid not null,
  game                text not null,
  round_id            bigint not null,
  amount_minor        bigint not null,
  auto_cashout        text,
  placed_at           timestamptz not null,
  cash_out            text check (cash_out in ('pending', 'accepted', 'crashed')),
  cash_out_multiplier text,
  cashed_out_at       timestamptz
);
create index play_bets_session on play_bets (session_id, tx_id);

create table demo_wallets (
  session_id     uuid primary key,
  debited_minor  bigint not null check (debited_minor >= 0)
);
