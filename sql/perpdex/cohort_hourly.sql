-- PerpdexCohortHourly returns the rows of one date partition of perpdex_cohorts_hourly:
-- the labels of the account snapshots in [$1, $2] taken exactly on an hour (a snapshot
-- between hours labels no hour). The marker below is perpdex/cohort_labels.sql, with its
-- band placeholders bound after $2. lake.CopyQuery sorts and writes the rows.
SELECT snapshot_ts AS hour_ts, wallet, size_cohort, pnl_cohort
FROM (
__LABELS__
) l
WHERE snapshot_ts = date_trunc('hour', snapshot_ts)
