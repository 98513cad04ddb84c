-- PredmktSmartMoney (mispricings) aggregates the cohort's buys per market and outcome
-- inside the window. $1 category, $2 window start ms, $3 window end ms (inclusive),
-- $4 $5 the first and last date partition that can hold fills of the window (from the
-- tape index's per-file ts spans), so only those files are opened.
WITH cohort AS (
    SELECT wallet FROM predmkt_board
    WHERE category = $1 AND realized_pnl >= 1000 AND resolved_markets >= 5 AND volume_all >= 5000
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
