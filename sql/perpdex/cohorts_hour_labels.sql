-- The point-in-time labels of the wallets $4 (comma-separated) in the hours $2 to $3
-- (inclusive) of one date's perpdex_cohorts_hourly partition ($1, one file): the
-- labels of a liquidations page's rows that query/perpdex_hour_labels.go does not
-- hold yet. The partition is sorted by hour_ts, so only the row groups of those hours
-- are read (about 600,000 rows for a page of the large lake: 30 ms; reading those
-- hours whole into Go cost 100).
SELECT hour_ts, wallet, size_cohort, pnl_cohort
FROM read_parquet($1, hive_partitioning = false)
WHERE hour_ts BETWEEN $2::TIMESTAMP AND $3::TIMESTAMP
  AND list_contains(string_split($4, ','), wallet);
