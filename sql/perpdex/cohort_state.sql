-- PerpdexCohortState returns what the cohort publication needs to decide its work:
-- the newest account snapshot at or before $1 (the store clock) in the date partitions
-- from $2 (DATE) to the clock's date, the newest published hourly label hour in the
-- partitions from $2, and the snapshot today's labels were computed from. $2 is the
-- newest published date (query/perpdex_cohorts_derived.go reads it from the partition
-- directories), so a check with nothing due reads one or two date partitions, not
-- every snapshot of the lake; on a lake with nothing published it is the earliest date.
SELECT (SELECT max(snapshot_ts) FROM perpdex_accounts
        WHERE date >= $2::DATE AND date <= CAST($1::TIMESTAMP AS DATE) AND snapshot_ts <= $1::TIMESTAMP),
       (SELECT max(hour_ts) FROM perpdex_cohorts_hourly WHERE date >= $2::DATE),
       (SELECT max(computed_at) FROM perpdex_cohorts_current);
