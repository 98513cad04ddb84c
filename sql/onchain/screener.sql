-- OnchainScreener ranks the tokens of one chain by activity over calendar dates.
-- Flows are measured at the edge of a wallet population P: in_usd is USD moved into P
-- from outside it, out_usd USD moved out of P; transfers inside P or outside it move
-- neither. P is every address the label cascade does not mark as a venue (cex, dex,
-- defi, market_maker, bridge), or the smart-money cohort with smart_money_only.
-- The smart-money cohort: non-venue wallets whose realized PnL on the chain over all
-- history up to the board hour is at least $5 USD (OnchainSmartMoneyPnL; realized PnL as in
-- discover: per token, the matched quantity min(bought, sold) times the average sell
-- price minus the average buy price, over priced transfers).
-- Reads the published legs; each transfer is its sending leg (dir -1: wallet is the
-- sender, cp the receiver).
-- It builds the hourly screener board (every token of the chain, unfiltered and
-- unsorted): OnchainScreener filters, ranks and cuts it in Go. The sort keys come back
-- as the exact DECIMAL figures rounded to the cent, so ranking on them is ranking to
-- the cent.
-- $1 chain, $2 first date (YYYY-MM-DD, inclusive), $3 until (epoch us, inclusive),
-- $4 smart_money_only, $5 cohort PnL floor (USD).
WITH venues AS (
    SELECT address FROM onchain_labels_at(make_timestamp($3)) WHERE venue -- labels observed by then
),
cohort AS (
    -- Materialised once per (chain, board hour) by smart_cohort.sql; $5 is unused here.
    SELECT address FROM onchain_cohort_mem WHERE chain = $1 AND until_us = $3 AND $5 IS NOT NULL
),
tx AS (
    SELECT l.token AS token_address, l.wallet AS from_address, l.cp AS to_address, l.usd,
           l.wallet NOT IN (SELECT address FROM venues) AS f_wallet,
           l.cp NOT IN (SELECT address FROM venues) AS t_wallet,
           l.wallet IN (SELECT address FROM cohort) AS f_smart,
           l.cp IN (SELECT address FROM cohort) AS t_smart
    FROM onchain_legs l
    WHERE l.chain = $1 AND l.dir = -1
      AND l.block_time >= CAST(CAST($2 AS DATE) AS TIMESTAMP) AND l.block_time <= make_timestamp($3)
),
scoped AS (
    -- With smart_money_only only transfers touching the cohort count, and P is the cohort.
    SELECT token_address, from_address, to_address, usd, f_smart, t_smart,
           CASE WHEN $4 THEN f_smart ELSE f_wallet END AS f_in,
           CASE WHEN $4 THEN t_smart ELSE t_wallet END AS t_in
    FROM tx
    WHERE NOT $4 OR f_smart OR t_smart
),
holders AS (
    SELECT token_address, count(DISTINCT a) AS n
    FROM (
        SELECT token_address, from_address AS a FROM scoped WHERE NOT $4 OR f_smart
        UNION ALL
        SELECT token_address, to_address FROM scoped WHERE NOT $4 OR t_smart
    )
    WHERE a <> '0x0000000000000000000000000000000000000000'
    GROUP BY token_address
),
agg AS (
    SELECT token_address,
           sum(usd) AS volume_usd,
           coalesce(sum(usd) FILTER (WHERE t_in AND NOT f_in), 0) AS in_usd,
           coalesce(sum(usd) FILTER (WHERE f_in AND NOT t_in), 0) AS out_usd,
           coalesce(sum(usd) FILTER (WHERE t_smart AND NOT f_smart), 0)
             - coalesce(sum(usd) FILTER (WHERE f_smart AND NOT t_smart), 0) AS smart_net,
           count(*) AS tx_count
    FROM scoped
    GROUP BY token_address
)
SELECT a.token_address, coalesce(k.symbol, ''), k.name,
       a.volume_usd::DOUBLE, a.in_usd::DOUBLE, a.out_usd::DOUBLE, coalesce(h.n, 0) AS unique_holders, a.tx_count,
       round(a.volume_usd, 2)::DOUBLE, (round(a.in_usd, 2) - round(a.out_usd, 2))::DOUBLE, round(a.smart_net, 2)::DOUBLE
FROM agg a
LEFT JOIN holders h USING (token_address)
LEFT JOIN onchain_tokens k ON k.chain = $1 AND k.token_address = a.token_address;
