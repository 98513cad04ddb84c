-- PerpdexPositionsBatch finds the newest position batch at or before the store clock
-- among the date partitions [$1, $2] (the `date` hive column is the UTC date of
-- snapshot_ts, so the bounds prune whole files), and the first batch after the clock
-- (NULL when there is none), which bounds how long the newest batch stays newest.
-- $1 first date, $2 last date (the clock's), $3 store clock.
SELECT (SELECT max(snapshot_ts) FROM perpdex_positions
        WHERE date >= $1::DATE AND date <= $2::DATE AND snapshot_ts <= $3::TIMESTAMP) AS newest,
       (SELECT min(snapshot_ts) FROM perpdex_positions
        WHERE date >= $2::DATE AND snapshot_ts > $3::TIMESTAMP) AS next_batch;
