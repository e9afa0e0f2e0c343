-- Owner: settlement_partitions; columns settlement_bets.wallet_partition, settlement_bets.version, settlement_outbox.wallet_partition  services/settlement
-- settlement as any number of instances. Each instance settles only the bets of the
-- wallet-transactions partitions its consumer group gave it (docs/decisions/money/0005-settlement-scale-out.md,
-- "Settlement scale-out"):
--   settlement_bets.wallet_partition    the wallet-transactions partition of the bet's records (null
--                                       only for rows from before this migration: filled in at start
--                                       from the record key, as the producer's partitioner does).
--   settlement_bets.version             bumped by every write of the row; a write names the version it
--                                       read, so of two writers that read the same state one wins.
--   settlement_outbox.wallet_partition  the partition the event is appended to (its bet's), so the
--                                       instance that takes a partition over recovers its entries.
--   settlement_partitions               the fencing token of each wallet partition: the instance that
--                                       claimed it last and a claim counter (epoch). Decisions are
--                                       committed and appended only under a lock on this row at the
--                                       writer's epoch; a claim waits for those locks.
alter table settlement_bets add column wallet_partition integer;
alter table settlement_bets add column version bigint not null default 1;
create index settlement_bets_open_by_partition on settlement_bets (wallet_partition)
  where status in ('placed', 'counted');

alter table settlement_outbox add column wallet_partition integer;
create index settlement_outbox_by_partition on settlement_outbox (wallet_partition);

create table settlement_partitions (
  "partition" integer primary key,
  epoch       bigint not null,
  owner       text not null,
  claimed_at  timestamptz not null default now()
);
