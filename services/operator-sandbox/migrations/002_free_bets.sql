-- free bets registered as bets that move no money, and form-B rollbacks found by round.
--   transactions.mode  'free' for a free bet's registration (amount 0) and its win or rollback, so a
--                      form-B win or rollback (linked by the player's round, not by id) finds the bet
--                      of its own mode when a round holds both; 'default' for everything before.
--   A form-B rollback of a bet never booked names no bet: it is stored with linked_tx_id null and
--   its round, and a late bet of that round and amount is refused (the index finds it).
alter table transactions add column mode text not null default 'default' check (mode in ('default', 'free'));
create index transactions_unlinked_rollback on transactions (user_id, currency, game, round_id)
  where kind = 'rollback' and linked_tx_id is null;
