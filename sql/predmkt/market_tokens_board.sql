-- PredmktMarketTokens from the hour's predmkt_market_board: market_tokens.sql's rows
-- ($1 and $2 as there), each token's last price the latest (by ts, then seq) of the
-- board's last fill before the hour and the fills since. $3 the board file of the hour
-- starting at $4 (epoch ms; $4 <= $2 < $4 + 1 hour), $5 the predmkt_market_fills
-- partitions holding the fills from $4 to $2 (markets_board.sql's $14).
SELECT tk.condition_id, tk.token_id, tk.outcome_index, tk.outcome, lp.price
FROM predmkt_tokens tk
LEFT JOIN (
    SELECT token_id, arg_max(price, k) AS price
    FROM (
        SELECT token_id, last_price AS price, (last_ts, last_seq) AS k
        FROM read_parquet($3, hive_partitioning = false)
        WHERE last_ts IS NOT NULL AND list_contains(string_split($1, ','), condition_id)
        UNION ALL
        SELECT token_id, price, (ts, seq)
        FROM read_parquet(string_split($5, chr(31)), hive_partitioning = false)
        WHERE ts >= $4 AND ts <= $2 AND list_contains(string_split($1, ','), condition_id)
    )
    GROUP BY token_id
) lp ON lp.token_id = tk.token_id
WHERE list_contains(string_split($1, ','), tk.condition_id)
ORDER BY tk.condition_id, tk.outcome_index;
