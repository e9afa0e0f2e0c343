-- Owners: api_keys  services/projector (auth-keys projection), except the column last_used_at,
--                   which services/api writes in batches (the rebuild carries it over).
-- Read model of the auth-keys topic: the admin listing and last use of every key, written
-- by the auth-keys projector (services/projector/auth-keys) with its checkpoint in the same statement;
-- last_used_at is written by the API in batches (services/api/auth/last-used.ts), never per request.
-- Secrets are not here: only their SHA-256, and only on the topic.

create table api_keys (
  key_id          text primary key,
  name            text not null,
  kind            text not null check (kind in ('private', 'public')),
  scopes          jsonb not null,
  rate_limit      int not null,
  allowed_origins jsonb not null,
  admin           boolean not null,
  bound_domain    text,
  created_at      timestamptz not null,
  revoked_at      timestamptz,
  deleted         boolean not null default false,
  last_used_at    timestamptz
);
