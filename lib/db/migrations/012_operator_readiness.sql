-- Owner: operators (columns readiness, ready, readiness_checked_at)  services/api
-- (docs/contract.md "Operator callbacks": "The balance and betting callbacks must be configured and working
-- before the session endpoint is used"): the last readiness probe of each operator
-- (lib/http/operator-probe.ts): its checks as JSON, whether it passed, and when. request-access
-- grants real-money sessions only for a ready operator.
alter table operators
  add column readiness            jsonb,
  add column ready                boolean not null default false,
  add column readiness_checked_at timestamptz;
