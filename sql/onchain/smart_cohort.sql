-- OnchainScreener's smart-money cohort of one chain at one board hour, materialised once
-- per (chain, hour) in onchain_cohort_mem (a few thousand addresses) instead of once per
-- screener board (eight boards a chain: four windows, with and without
-- smart_money_only), since it reads every leg of the chain's history: non-venue wallets
-- whose realized PnL over all history up to the board hour is at least the floor
-- (per token, the matched quantity min(bought, sold) times the average sell price minus
-- the average buy price, over priced transfers).
-- History from the wallet bands, as discover_all.sql reads it: on a board hour of the
-- serving date of the published onchain_wallet_bands, the whole days up to the recent
-- split R come summed per (wallet, token, band) from them (the amounts of the priced
-- legs; an unpriced leg's usd is 0, so the days' usd sums are those of their priced
-- legs), the edge days up to R from onchain_wallet_edges and the legs dated after R
-- from onchain_legs. Without them the bands and edges are empty files and R is
-- 0001-01-01. A (wallet, token) with a priced leg each way has b > 0 and s > 0 either
-- way, and then the same sums.
-- $1 chain, $2 until (epoch us, inclusive), $3 cohort PnL floor (USD), $4 R, $5 the
-- chain's onchain_wallet_edges files, $6 its onchain_wallet_bands files.
INSERT INTO onchain_cohort_mem
WITH venues AS (
    SELECT address FROM onchain_labels_at(make_timestamp($2)) WHERE venue -- labels observed by then
),
legs AS (
    SELECT wallet, token, dir, amount, usd
    FROM read_parquet($5, hive_partitioning = false)
    WHERE block_time <= make_timestamp($2) AND priced
    UNION ALL
    SELECT wallet, token, dir, amount, usd
    FROM onchain_legs
    WHERE chain = $1 AND date > CAST($4 AS DATE) AND block_time <= make_timestamp($2) AND priced
),
wt AS (
    SELECT w, token, sum(b) AS b, sum(bu) AS bu, sum(s) AS s, sum(su) AS su
    FROM (
        SELECT wallet AS w, token, amount_in_p AS b, inflow AS bu, amount_out_p AS s, outflow AS su
        FROM read_parquet($6, hive_partitioning = false)
        UNION ALL
        SELECT wallet, token,
               sum(amount) FILTER (WHERE dir = 1), sum(usd) FILTER (WHERE dir = 1),
               sum(amount) FILTER (WHERE dir = -1), sum(usd) FILTER (WHERE dir = -1)
        FROM legs
        GROUP BY wallet, token
    )
    GROUP BY w, token
)
SELECT $1 AS chain, $2 AS until_us, w AS address
FROM wt
WHERE b > 0 AND s > 0 AND w NOT IN (SELECT address FROM venues)
GROUP BY w
HAVING sum(CAST(least(b, s) * (su / s - bu / b) AS DECIMAL(38, 6))) >= $3;
