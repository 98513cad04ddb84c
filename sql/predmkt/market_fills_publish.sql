-- The taker fills of one predmkt_trades partition (each tape trade once), in time order,
-- for the predmkt_market_fills partition of the same date (query/day_derived.go). $1 the
-- source trades file. usd is rounded to integer micro-USD per fill, as
-- market_days_publish.sql and market_hours_publish.sql round each fill before adding, so
-- a sum over these rows equals those tables' sums over the same fills.
SELECT ts, seq, condition_id, token_id,
       CAST(round(usd * 1e6) AS BIGINT) AS vol,
       price
FROM read_parquet($1, hive_partitioning = false)
WHERE role = 'taker'
