-- PredmktSmartMoney (flows) aggregates the cohort's trades per market inside the window.
-- $1 category ('all' or one name), $2 window start ms, $3 window end ms (inclusive),
-- $4 $5 the first and last date partition that can hold fills of the window (from the
-- tape index's per-file ts spans), so only those files are opened; $6 the cohort's
-- wallets, comma-separated, taken from the hourly board the request is answered from
-- (at least 1,000 USD realized PnL, five resolved markets and 5,000 USD volume on
-- the category).
WITH cohort AS (
    SELECT DISTINCT unnest(string_split($6, ',')) AS wallet
)
SELECT t.condition_id, any_value(m.question), any_value(m.slug),
       count(DISTINCT t.wallet),
       -- exact micro-USD sums, so cent rounding never depends on summation order
       CAST(coalesce(sum(CAST(round(t.usd * 1e6) AS BIGINT)) FILTER (WHERE t.side = 'BUY'), 0) AS BIGINT),
       CAST(coalesce(sum(CAST(round(t.usd * 1e6) AS BIGINT)) FILTER (WHERE t.side = 'SELL'), 0) AS BIGINT),
       count(*), max(t.ts),
       any_value(y.token_id)
FROM predmkt_trades t
JOIN cohort c ON c.wallet = t.wallet
JOIN predmkt_markets m ON m.condition_id = t.condition_id
LEFT JOIN predmkt_tokens y ON y.condition_id = t.condition_id AND y.outcome_index = 0
WHERE t."date" BETWEEN CAST($4 AS DATE) AND CAST($5 AS DATE)
  AND t.ts BETWEEN $2 AND $3 AND ($1 = 'all' OR m.category = $1)
GROUP BY t.condition_id;
