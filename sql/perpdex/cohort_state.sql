-- PerpdexCohortState returns what the cohort publication needs to decide its work:
-- the newest account snapshot at or before $1 (the store clock), the newest published
-- hourly label hour and the snapshot today's labels were computed from.
SELECT (SELECT max(snapshot_ts) FROM perpdex_accounts WHERE snapshot_ts <= $1::TIMESTAMP),
       (SELECT max(hour_ts) FROM perpdex_cohorts_hourly),
       (SELECT max(computed_at) FROM perpdex_cohorts_current);
