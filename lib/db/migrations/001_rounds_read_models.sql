-- Owners (the one service that writes each table; docs/architecture.md "Tables and their writers"):
--   games, rounds            services/projector (rounds projection)
--   projection_checkpoints   every checkpointed consumer (lib/log/checkpointed-consumer.ts), each only
--                            the rows of its own projection name: projector (rounds, auth-keys, wallet),
--                            settlement (settlement)
-- Read models of the rounds projection: the game list and round history, plus the projector
-- checkpoints (topic, partition, offset) written in the same transaction as the rows.

create table games (
  id          int primary key,
  slug        text not null unique,
  name        text not null,
  type        text not null,
  last_round  bigint,
  last_update timestamptz
);

insert into games (id, slug, name, type) values
  (1, 'crash', 'Crash', 'multiplier'),
  (2, 'double', 'Double', 'color'),
  (3, 'slot', 'Slot Machine', 'slots'),
  (4, 'wall-street', 'Wall Street', 'trending');

create table rounds (
  game_id      int not null references games (id),
  round_id     bigint not null,
  game_slug    text not null,
  game_type    text not null,
  finished_at  timestamptz not null,
  value        text not null,
  extras       jsonb not null,
  proof        jsonb,
  appended_at  timestamptz not null,
  primary key (game_id, round_id)
);

-- History of one game, newest first; history by type reads the same index per game.
create index rounds_game_finished on rounds (game_id, finished_at desc, round_id desc);

create table projection_checkpoints (
  projection  text not null,
  topic       text not null,
  "partition" int not null,
  "offset"    bigint not null,
  updated_at  timestamptz not null default now(),
  primary key (projection, topic, "partition")
);
