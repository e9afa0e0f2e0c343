-- Owner: wallet_callback_attempts  services/wallet-saga
-- Every attempt of every callback the saga sent (wallet_callbacks keeps only the last request and
-- answer): the operator portal shows them, and its overview counts them. Written by the saga's
-- batched finish in the SAME statement that stores the attempt's result in wallet_callbacks
-- (services/wallet-saga/store.ts finishAttempts), fenced by the same lease, so an attempt is
-- recorded exactly when its result is. The breaker's balance probes and the readiness probe are
-- not callbacks and are not recorded here.
--   attempt          1-based ordinal of the attempt over the callback's whole life: a re-drive
--                    restarts wallet_callbacks.attempts (the retry schedule) but not this.
--   at               when the attempt was sent, Unix ms (its result's time for one never sent).
--   request_*        what was sent: method, url, the Standard Webhooks headers (webhook-id,
--                    webhook-timestamp, webhook-signature, content-type; the signature is a MAC,
--                    never the secret) and the JSON body. Null when nothing could be sent (unknown
--                    operator or session, a request that cannot be written).
--   response_*       the operator's HTTP status and the first 16384 characters of its body; null
--                    on a timeout or connection error (then `error` says which).
--   class, code      how the answer counted under the operator's answer table
--                    (rules/wallet/answers.ts: ok, duplicate, mismatch, unknown_transaction,
--                    refused, failed) and its code (e.g. TIMEOUT, INSUFFICIENT_FUNDS).
--   next_attempt_at  when the callback is tried again after this attempt (Unix ms), null when
--                    this attempt ended it (done or parked).
-- Retention: docs/decisions/money/0013-callback-attempts-kept.md.
create table wallet_callback_attempts (
  tx_id            bigint not null,
  attempt          int not null,
  operator_id      text not null,
  at               bigint not null,
  request_method   text,
  request_url      text,
  request_headers  jsonb,
  request_body     text,
  response_status  int,
  response_body    text,
  latency_ms       int not null,
  class            text not null,
  code             text,
  error            text,
  next_attempt_at  bigint,
  primary key (tx_id, attempt)
);
create index wallet_callback_attempts_operator on wallet_callback_attempts (operator_id, at);
