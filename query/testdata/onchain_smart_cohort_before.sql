-- OnchainScreener's smart-money cohort of one chain at one board hour, materialised once
-- per (chain, hour) in onchain_cohort_mem (a few thousand addresses) instead of once per
-- screener board (eight boards a chain: four windows, with and without
-- smart_money_only), since it reads every leg of the chain's history: non-venue wallets
-- whose realized PnL over all history up to the board hour is at least the floor
-- (per token, the matched quantity min(bought, sold) times the average sell price minus
-- the average buy price, over priced transfers). $1 chain, $2 until (epoch us,
-- inclusive), $3 cohort PnL floor (USD).
INSERT INTO onchain_cohort_mem
WITH venues AS (
    SELECT address FROM onchain_labels_at(make_timestamp($2)) WHERE venue -- labels observed by then
),
wt AS (
    SELECT wallet AS w, token,
           sum(amount) FILTER (WHERE dir = 1) AS b, sum(usd) FILTER (WHERE dir = 1) AS bu,
           sum(amount) FILTER (WHERE dir = -1) AS s, sum(usd) FILTER (WHERE dir = -1) AS su
    FROM onchain_legs
    WHERE chain = $1 AND block_time <= make_timestamp($2) AND priced
    GROUP BY wallet, token
)
SELECT $1 AS chain, $2 AS until_us, w AS address
FROM wt
WHERE b > 0 AND s > 0 AND w NOT IN (SELECT address FROM venues)
GROUP BY w
HAVING sum(CAST(least(b, s) * (su / s - bu / b) AS DECIMAL(38, 6))) >= $3;
