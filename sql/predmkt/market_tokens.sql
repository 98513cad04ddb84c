-- PredmktMarketTokens returns the outcome tokens of the listed markets with the last
-- traded price of each at or before now (NULL when it never traded).
-- $1 comma-separated condition ids, $2 now (epoch ms); then markets.sql's files
-- ($12 to $19 there, separated by chr(31), never empty): $3 predmkt_market_days partitions,
-- $4 predmkt_trades partitions read whole, $5 the predmkt_market_totals partition, $6
-- predmkt_market_hours partitions but for the hours $7 and $8 (epoch ms of their start,
-- -1 none), read from the trades partitions $9 or, in time order, from the
-- predmkt_market_fills partitions $10 (each date in one of them). query/predmkt_markets.go
-- (marketDaysPlan) lists each date in at most one, a published day or hour only when all
-- its fills are at or before now.
SELECT tk.condition_id, tk.token_id, tk.outcome_index, tk.outcome, lp.price
FROM predmkt_tokens tk
LEFT JOIN (
    SELECT token_id, arg_max(price, k) AS price
    FROM (
        SELECT token_id, last_price AS price, (last_ts, last_seq) AS k
        FROM read_parquet(string_split($5, chr(31)), hive_partitioning = false)
        WHERE list_contains(string_split($1, ','), condition_id)
        UNION ALL
        SELECT token_id, last_price, (last_ts, last_seq)
        FROM read_parquet(string_split($3, chr(31)), hive_partitioning = false)
        WHERE list_contains(string_split($1, ','), condition_id)
        UNION ALL
        SELECT token_id, last_price, (last_ts, last_seq)
        FROM read_parquet(string_split($6, chr(31)), hive_partitioning = false)
        WHERE hour_ts <= $2
          AND hour_ts <> $7 AND hour_ts <> $8
          AND list_contains(string_split($1, ','), condition_id)
        UNION ALL
        SELECT token_id, price, (ts, seq)
        FROM read_parquet(string_split($4, chr(31)), hive_partitioning = false)
        WHERE role = 'taker' AND ts <= $2 AND list_contains(string_split($1, ','), condition_id)
        UNION ALL
        SELECT token_id, price, (ts, seq)
        FROM read_parquet(string_split($9, chr(31)), hive_partitioning = false)
        WHERE ts // 3600000 * 3600000 IN ($7, $8)
          AND role = 'taker' AND ts <= $2 AND list_contains(string_split($1, ','), condition_id)
        UNION ALL
        SELECT token_id, price, (ts, seq)
        FROM read_parquet(string_split($10, chr(31)), hive_partitioning = false)
        WHERE $7 >= 0 AND ts >= $7 AND ts < $7 + 3600000 AND ts <= $2 AND list_contains(string_split($1, ','), condition_id)
        UNION ALL
        SELECT token_id, price, (ts, seq)
        FROM read_parquet(string_split($10, chr(31)), hive_partitioning = false)
        WHERE $8 >= 0 AND ts >= $8 AND ts < $8 + 3600000 AND ts <= $2 AND list_contains(string_split($1, ','), condition_id)
    )
    GROUP BY token_id
) lp ON lp.token_id = tk.token_id
WHERE list_contains(string_split($1, ','), tk.condition_id)
ORDER BY tk.condition_id, tk.outcome_index;
