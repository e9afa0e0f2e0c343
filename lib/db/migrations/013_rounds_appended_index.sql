-- Owner: rounds  services/projector
-- The rows of a game in the order the projector committed them (its log's append order), read by the
-- API's rounds window to follow new rows whatever their finish times (services/api/rounds/window-feed.ts).
create index rounds_game_appended on rounds (game_id, appended_at);
