-- PerpdexCohortSnapshotAt: the newest account snapshot at or before $1 (the clock), the
-- one today's labels at that clock are computed from; NULL before the first.
SELECT max(snapshot_ts) FROM perpdex_accounts
WHERE date <= CAST($1::TIMESTAMP AS DATE) AND snapshot_ts <= $1::TIMESTAMP;
