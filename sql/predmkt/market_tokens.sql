-- PredmktMarketTokens returns the outcome tokens of the listed markets with the last
-- traded price of each at or before now (NULL when it never traded).
-- $1 comma-separated condition ids, $2 now (epoch ms), $3 the dates whose last fills
-- come from predmkt_market_days, $4 the dates read from predmkt_trades (comma-separated;
-- query/day_derived.go lists each date in at most one, a published day only when all
-- its fills are at or before now), $5 the predmkt_market_totals date standing in for
-- every date up to it ('' none), $6 the dates whose last fills come from
-- predmkt_market_hours but for the hours $7 and $8 (epoch ms of their start, -1 none),
-- read from the raw fills of the dates $9 ('' none): the plan is markets.sql's.
SELECT tk.condition_id, tk.token_id, tk.outcome_index, tk.outcome, lp.price
FROM predmkt_tokens tk
LEFT JOIN (
    SELECT token_id, arg_max(price, k) AS price
    FROM (
        SELECT token_id, last_price AS price, (last_ts, last_seq) AS k
        FROM predmkt_market_totals
        WHERE $5 <> '' AND strftime(date, '%Y-%m-%d') = $5
          AND condition_id IN (SELECT unnest(string_split($1, ',')))
        UNION ALL
        SELECT token_id, last_price, (last_ts, last_seq)
        FROM predmkt_market_days
        WHERE list_contains(string_split($3, ','), strftime(date, '%Y-%m-%d'))
          AND condition_id IN (SELECT unnest(string_split($1, ',')))
        UNION ALL
        SELECT token_id, last_price, (last_ts, last_seq)
        FROM predmkt_market_hours
        WHERE list_contains(string_split($6, ','), strftime(date, '%Y-%m-%d')) AND hour_ts <= $2
          AND hour_ts <> $7 AND hour_ts <> $8
          AND condition_id IN (SELECT unnest(string_split($1, ',')))
        UNION ALL
        SELECT token_id, price, (ts, seq)
        FROM predmkt_trades
        WHERE (list_contains(string_split($4, ','), strftime(date, '%Y-%m-%d'))
               OR (list_contains(string_split($9, ','), strftime(date, '%Y-%m-%d')) AND ts // 3600000 * 3600000 IN ($7, $8)))
          AND role = 'taker' AND ts <= $2 AND condition_id IN (SELECT unnest(string_split($1, ',')))
    )
    GROUP BY token_id
) lp ON lp.token_id = tk.token_id
WHERE tk.condition_id IN (SELECT unnest(string_split($1, ',')))
ORDER BY tk.condition_id, tk.outcome_index;
