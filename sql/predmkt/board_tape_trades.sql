-- Tape index (trades): every fill of one archive trades file in ts order, with the
-- exact micro-unit amounts the smart-money SQL sums (round(x * 1e6) as BIGINT).
-- The taker rows are what /ohlcv aggregates; the index groups them per token.
-- $1 the file's path.
SELECT ts, seq, token_id, condition_id, outcome_index, wallet, role, side, price, size,
       CAST(round(usd * 1e6) AS BIGINT), CAST(round(size * 1e6) AS BIGINT)
FROM read_parquet($1)
ORDER BY ts, seq, token_id;
