-- PerpdexLiquidations returns liquidated users' fills, newest first, with the cohort
-- labels of the liquidated wallet: the hourly label of the liquidation's hour when one
-- was published for the wallet (point_in_time), else today's label (current).
-- $1 coin|NULL, $2 wallet|NULL, $3 start, $4 end (inclusive), $5 side closed|NULL,
-- $6..$8 keyset (time, tid, wallet) of the last row served or NULL, $9 limit, $10 the
-- snapshot of today's labels at the clock (perpdex_cohorts_at), $11 the newest hour
-- labelled by the clock (query/perpdex_cohorts_at.go), $12 the perpdex_liquidations
-- files read, $13 the perpdex_fills files read (separated by chr(31); never empty: a file of
-- no rows stands for none, query/file_lists.go), $14 the perpdex_cohorts_hourly files
-- of the dates of the page's rows: the hourly labels are partitioned by the date of
-- hour_ts, so only those partitions can match, and reading only them keeps the join
-- from opening every day of labels (query/perpdex_venue.go learns them by a first run
-- with $14 the empty file, whose rows are the page's, unlabelled), $15 and $16 the
-- first and last hour of the page's rows (the labels are sorted by hour_ts: row groups
-- outside are skipped).
WITH f AS (
    -- The published liquidations of the dates whose files are listed in $12, the raw
    -- fills of the dates in $13 (not yet published, or changed since):
    -- query/day_derived.go lists each fills date in exactly one.
    SELECT time, wallet, coin, side, sz, px, liq_mark_px, tid
    FROM read_parquet(string_split($12, chr(31)), hive_partitioning = false)
    UNION ALL
    SELECT time, wallet, coin, CASE WHEN start_position > 0 THEN 'long' ELSE 'short' END, sz, px, liq_mark_px, tid
    FROM read_parquet(string_split($13, chr(31)), hive_partitioning = false)
    WHERE liquidation
), l AS (
    SELECT time, wallet, coin, side, sz, px, liq_mark_px, tid
    FROM f
    WHERE ($1::VARCHAR IS NULL OR coin = $1)
      AND ($2::VARCHAR IS NULL OR wallet = $2)
      AND time >= $3::TIMESTAMP AND time <= $4::TIMESTAMP
      AND ($5::VARCHAR IS NULL OR side = $5)
      AND ($6::TIMESTAMP IS NULL
           OR time < $6::TIMESTAMP
           OR (time = $6::TIMESTAMP AND (tid < $7 OR (tid = $7 AND wallet < $8))))
    ORDER BY time DESC, tid DESC, wallet DESC
    LIMIT $9
)
SELECT l.time, l.wallet, l.coin, l.side, l.sz, l.sz * l.px, l.liq_mark_px, l.tid,
       h.size_cohort, h.pnl_cohort, h.wallet IS NOT NULL AS pit,
       c.size_cohort, c.pnl_cohort
FROM l
LEFT JOIN (SELECT * FROM read_parquet(string_split($14, chr(31)), hive_partitioning = false)
           WHERE hour_ts BETWEEN $15::TIMESTAMP AND $16::TIMESTAMP) h
       ON h.wallet = l.wallet AND h.hour_ts = date_trunc('hour', l.time) AND h.hour_ts <= $11::TIMESTAMP
LEFT JOIN perpdex_cohorts_at($10::TIMESTAMP) c ON c.wallet = l.wallet
ORDER BY l.time DESC, l.tid DESC, l.wallet DESC;
