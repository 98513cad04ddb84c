-- PredmktSmartMoney (mispricings) aggregates the cohort's buys per market and outcome
-- inside the window. $1 category, $2 window start ms, $3 window end ms (inclusive),
-- $4 $5 the first and last date partition that can hold fills of the window (from the
-- tape index's per-file ts spans), so only those files are opened; $6 the cohort's
-- wallets, comma-separated, taken from the hourly board the request is answered from
-- (at least 1,000 USD realized PnL, five resolved markets and 5,000 USD volume on
-- the category).
WITH cohort AS (
    SELECT DISTINCT unnest(string_split($6, ',')) AS wallet
)
SELECT t.condition_id, any_value(m.question), any_value(m.slug), t.outcome_index, any_value(t.token_id),
       count(DISTINCT t.wallet),
       -- exact micro-unit sums
       CAST(sum(CAST(round(t.usd * 1e6) AS BIGINT)) AS BIGINT), CAST(sum(CAST(round(t.size * 1e6) AS BIGINT)) AS BIGINT), max(t.ts)
FROM predmkt_trades t
JOIN cohort c ON c.wallet = t.wallet
JOIN predmkt_markets m ON m.condition_id = t.condition_id
WHERE t."date" BETWEEN CAST($4 AS DATE) AND CAST($5 AS DATE)
  AND t.side = 'BUY' AND t.ts BETWEEN $2 AND $3 AND ($1 = 'all' OR m.category = $1)
GROUP BY t.condition_id, t.outcome_index;
