-- PredmktMarketTokens returns the outcome tokens of the listed markets with the last
-- traded price of each at or before now (NULL when it never traded).
-- $1 comma-separated condition ids, $2 now (epoch ms).
SELECT tk.condition_id, tk.token_id, tk.outcome_index, tk.outcome, lp.price
FROM predmkt_tokens tk
LEFT JOIN (
    SELECT token_id, arg_max(price, (ts, seq)) AS price
    FROM predmkt_trades
    WHERE role = 'taker' AND ts <= $2 AND condition_id IN (SELECT unnest(string_split($1, ',')))
    GROUP BY token_id
) lp ON lp.token_id = tk.token_id
WHERE tk.condition_id IN (SELECT unnest(string_split($1, ',')))
ORDER BY tk.condition_id, tk.outcome_index;
