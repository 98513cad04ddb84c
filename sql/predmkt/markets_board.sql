-- PredmktMarkets from the hour's predmkt_market_board: markets.sql's listing (the same
-- $1 to $11 and the same rows) with the trading figures summed from the board of the hour
-- the clock falls in and the fills since, instead of every day's, hour's and fill's sums.
-- This file is the figures (t) alone: query/predmkt_market_board.go appends markets.sql
-- from its "), v AS (" on, so the two listings cannot drift apart.
-- $12 the board file of the hour starting at $13 (epoch ms; $13 <= $1 < $13 + 1 hour),
-- $14 the predmkt_market_fills partitions holding the fills from the 24-hour window's
-- start ($1 - 24 hours, inside the hour 24 hours before $13) to the board's window
-- ($13 - 23 hours), and from $13 to $1 (query/predmkt_market_board.go picks them from
-- their spans, separated by chr(31); never empty: a file of no rows stands for none).
WITH t AS (
    -- The board: every fill before $13, and those of the 23 hours before it in vol24.
    SELECT condition_id, vol, vol_w AS vol24, n, last_ts
    FROM read_parquet($12, hive_partitioning = false)
    WHERE ($8 = '' OR condition_id = $8)
    UNION ALL
    -- The window's start to the board's window: counted in vol24 only (the board's vol
    -- has them).
    SELECT condition_id, 0, vol, 0, NULL
    FROM read_parquet(string_split($14, chr(31)), hive_partitioning = false)
    WHERE ts >= $1 - 86400000 AND ts < $13 - 82800000 AND ($8 = '' OR condition_id = $8)
    UNION ALL
    -- The hour's fills to the clock.
    SELECT condition_id, vol, vol, 1, ts
    FROM read_parquet(string_split($14, chr(31)), hive_partitioning = false)
    WHERE ts >= $13 AND ts <= $1 AND ($8 = '' OR condition_id = $8)
