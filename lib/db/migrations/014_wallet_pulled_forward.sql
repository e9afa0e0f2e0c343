-- Owner: wallet_callbacks (column pulled_forward_at)  services/wallet-saga
-- A callback waiting for a later retry is made due at once when its operator is seen to answer
-- again (docs/decisions/retries/0002-retries-pulled-forward.md, retries pulled forward): pulled_forward_at is when
-- that was done (Unix ms), null when never. A callback is pulled forward at most once; a failure
-- after it waits the schedule's step it was waiting for. A re-drive clears it with the schedule.
alter table wallet_callbacks add column pulled_forward_at bigint;
