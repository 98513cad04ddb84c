-- The liquidation fills of one perpdex_fills partition, for the perpdex_liquidations
-- partition of the same date (query/day_derived.go). $1 the source fills file.
SELECT time, wallet, coin, CASE WHEN start_position > 0 THEN 'long' ELSE 'short' END AS side,
       sz, px, liq_mark_px, tid
FROM read_parquet($1, hive_partitioning = false)
WHERE liquidation
