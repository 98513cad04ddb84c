-- PerpdexLiquidations returns liquidated users' fills, newest first. Their cohort
-- labels are attached by the route (query/perpdex_venue.go): today's labels of the
-- page's wallets by perpdex_cohorts_of.sql, the label of each liquidation's hour from
-- the hour's labels (query/perpdex_hour_labels.go: a byte-bounded cache of
-- perpdex_cohorts_hourly read one hour at a time). Joined here, the hourly labels read
-- every label of every hour the page spans (about 340,000 rows for a page of the large
-- lake) for some twenty wallets, and today's labels every wallet's once per pass.
-- $1 coin|NULL, $2 wallet|NULL, $3 start, $4 end (inclusive), $5 side closed|NULL,
-- $6..$8 keyset (time, tid, wallet) of the last row served or NULL, $9 limit, $10 the
-- perpdex_liquidations files read, $11 the perpdex_fills files read (separated by
-- chr(31); never empty: a file of no rows stands for none, query/file_lists.go).
WITH f AS (
    -- The published liquidations of the dates whose files are listed in $10, the raw
    -- fills of the dates in $11 (not yet published, or changed since):
    -- query/day_derived.go lists each fills date in exactly one.
    SELECT time, wallet, coin, side, sz, px, liq_mark_px, tid
    FROM read_parquet(string_split($10, chr(31)), hive_partitioning = false)
    UNION ALL
    SELECT time, wallet, coin, CASE WHEN start_position > 0 THEN 'long' ELSE 'short' END, sz, px, liq_mark_px, tid
    FROM read_parquet(string_split($11, chr(31)), hive_partitioning = false)
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
SELECT time, wallet, coin, side, sz, sz * px, liq_mark_px, tid
FROM l
ORDER BY time DESC, tid DESC, wallet DESC;
