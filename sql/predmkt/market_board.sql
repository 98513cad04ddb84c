-- The predmkt_market_board of the hour starting at $12 (epoch ms), per market and outcome
-- token: the taker fills before it summed (vol, n) with the last one (by ts, then seq),
-- and vol_w, the sum of those from $11 (the hour 23 hours before) to $12.
-- $1 is $12 - 1, the clock of markets.sql's plan ($2 to $9 are its $12 to $19:
-- query/predmkt_markets.go, marketDaysPlan), so the fills before the hour are summed
-- from the same per-day tables, hours and fills a request at that clock would read, each
-- date from exactly one of them; $10 the predmkt_market_fills partitions holding the
-- fills of [$11, $12) (in time order, so a range of ts reads few row groups).
SELECT condition_id, token_id,
       CAST(sum(vol) AS BIGINT)   AS vol,
       CAST(sum(vol_w) AS BIGINT) AS vol_w,
       CAST(sum(n) AS BIGINT)     AS n,
       max(last_ts)               AS last_ts,
       arg_max(last_seq, k)       AS last_seq,
       arg_max(last_price, k)     AS last_price
FROM (
    SELECT *, CASE WHEN last_ts IS NOT NULL THEN (last_ts, last_seq) END AS k
    FROM (
        SELECT condition_id, token_id, vol, 0 AS vol_w, n, last_ts, last_seq, last_price
        FROM read_parquet(string_split($4, chr(31)), hive_partitioning = false)
        UNION ALL
        SELECT condition_id, token_id, vol, 0, n, last_ts, last_seq, last_price
        FROM read_parquet(string_split($2, chr(31)), hive_partitioning = false)
        UNION ALL
        SELECT condition_id, token_id, vol, 0, n, last_ts, last_seq, last_price
        FROM read_parquet(string_split($5, chr(31)), hive_partitioning = false)
        WHERE hour_ts <= $1 AND hour_ts <> $6 AND hour_ts <> $7
        UNION ALL
        SELECT condition_id, token_id, CAST(round(usd * 1e6) AS BIGINT), 0, 1, ts, seq, price
        FROM read_parquet(string_split($3, chr(31)), hive_partitioning = false)
        WHERE role = 'taker' AND ts <= $1
        UNION ALL
        SELECT condition_id, token_id, CAST(round(usd * 1e6) AS BIGINT), 0, 1, ts, seq, price
        FROM read_parquet(string_split($8, chr(31)), hive_partitioning = false)
        WHERE ts // 3600000 * 3600000 IN ($6, $7) AND role = 'taker' AND ts <= $1
        UNION ALL
        SELECT condition_id, token_id, vol, 0, 1, ts, seq, price
        FROM read_parquet(string_split($9, chr(31)), hive_partitioning = false)
        WHERE $6 >= 0 AND ts >= $6 AND ts < $6 + 3600000 AND ts <= $1
        UNION ALL
        SELECT condition_id, token_id, vol, 0, 1, ts, seq, price
        FROM read_parquet(string_split($9, chr(31)), hive_partitioning = false)
        WHERE $7 >= 0 AND ts >= $7 AND ts < $7 + 3600000 AND ts <= $1
        UNION ALL
        SELECT condition_id, token_id, 0, vol, 0, NULL, NULL, NULL
        FROM read_parquet(string_split($10, chr(31)), hive_partitioning = false)
        WHERE ts >= $11 AND ts < $12
    )
)
GROUP BY condition_id, token_id
ORDER BY condition_id, token_id
