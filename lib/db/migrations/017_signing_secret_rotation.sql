-- Owner: operators (columns previous_signing_secret, previous_secret_valid_until)  lib/db/operator-config.ts
-- Signing-secret rotation with overlap: rotating makes the current secret the previous one, valid
-- until previous_secret_valid_until, and stores a new one. While the previous secret is valid
-- every request to the operator (callbacks, balance requests, probes) carries both signatures in
-- webhook-signature (Standard Webhooks: a space-delimited list, a verifier accepts any match);
-- after it, only the new one. Null when the operator never rotated (or the previous one lapsed
-- and was rotated away).
alter table operators
  add column previous_signing_secret     text,
  add column previous_secret_valid_until timestamptz;
