-- The taker fills of one predmkt_trades partition summed per UTC hour, market and
-- outcome token, for the predmkt_market_hours partition of the same date
-- (query/day_derived.go). $1 the source trades file.
-- The sums are market_days_publish.sql's, per hour: USD as integer micro-USD (each fill
-- rounded, then added), the last fill the latest by (ts, seq), so a sum of hours equals
-- the sum over their fills.
SELECT ts // 3600000 * 3600000                AS hour_ts,
       condition_id, token_id,
       CAST(sum(round(usd * 1e6)) AS BIGINT) AS vol,
       count(*)                              AS n,
       min(ts)                               AS first_ts,
       max(ts)                               AS last_ts,
       arg_max(seq, (ts, seq))               AS last_seq,
       arg_max(price, (ts, seq))             AS last_price
FROM read_parquet($1, hive_partitioning = false)
WHERE role = 'taker'
GROUP BY ALL
