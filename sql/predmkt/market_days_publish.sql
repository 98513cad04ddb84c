-- The taker fills of one predmkt_trades partition summed per market and outcome token,
-- for the predmkt_market_days partition of the same date (query/day_derived.go).
-- $1 the source trades file.
-- USD is summed as integer micro-USD exactly as markets.sql sums the raw tape (each fill
-- rounded, then added), so a sum of days equals the sum over their fills; the last
-- fill is the latest by (ts, seq), as market_tokens.sql takes it.
SELECT condition_id, token_id,
       CAST(sum(round(usd * 1e6)) AS BIGINT) AS vol,
       count(*)                              AS n,
       min(ts)                               AS first_ts,
       max(ts)                               AS last_ts,
       arg_max(seq, (ts, seq))               AS last_seq,
       arg_max(price, (ts, seq))             AS last_price
FROM read_parquet($1, hive_partitioning = false)
WHERE role = 'taker'
GROUP BY condition_id, token_id
