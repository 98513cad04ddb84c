-- PerpdexBuildersDaily: one fills date's per-builder partial aggregates for the builders
-- board (lake perpdex_builders_daily; sql/perpdex/builders_board.sql combines the
-- complete days of a window from them). $1 the date. The USD sums are exact decimals
-- (each fill's value rounded to 1e-10 first, as builder_metrics.sql), so a sum of days
-- has the bits of a sum over the fills; what is not a sum keeps its values: the
-- distinct wallets, coins and dexes of the day, and every fee rate (the board's median
-- is taken over the window's rates). A trade's two sides share their time, so the
-- share volume's first side per (builder, tid) is found within the day.
WITH f AS (
    SELECT *, px * sz AS ntl, CAST(px * sz AS DECIMAL(38, 10)) AS ntl_x,
           CAST(builder_fee AS DECIMAL(38, 10)) AS builder_fee_x, CAST(fee AS DECIMAL(38, 10)) AS fee_x,
           CAST(deployer_fee AS DECIMAL(38, 10)) AS deployer_fee_x, CAST(closed_pnl AS DECIMAL(38, 10)) AS closed_pnl_x
    FROM perpdex_fills
    WHERE date = $1::DATE AND builder IS NOT NULL
), g AS (
    SELECT *, row_number() OVER (PARTITION BY builder, tid ORDER BY wallet) AS side_no FROM f
)
SELECT builder,
       CAST(time AS DATE)                                                AS day,
       sum(builder_fee_x)                                                AS fee_x,
       sum(ntl_x)                                                        AS volume_x,
       sum(ntl_x) FILTER (WHERE side_no = 1)                             AS share_x,
       count(*)                                                          AS fills,
       sum(fee_x - coalesce(builder_fee_x, 0) - coalesce(deployer_fee_x, 0)) AS node_fee_x,
       sum(fee_x)                                                        AS trader_fee_x,
       sum(deployer_fee_x)                                               AS deployer_fee_x,
       sum(closed_pnl_x)                                                 AS closed_pnl_x,
       count(*) FILTER (WHERE crossed)                                   AS crossed_fills,
       min(time)                                                         AS first_seen,
       max(time)                                                         AS last_seen,
       list(builder_fee / ntl * 10000 ORDER BY builder_fee / ntl * 10000) FILTER (WHERE builder_fee > 0) AS fee_rates_bps,
       sum(ntl_x) FILTER (WHERE side = 'B')                              AS buy_x,
       sum(ntl_x) FILTER (WHERE side = 'A')                              AS sell_x,
       count(*) FILTER (WHERE fee_token <> 'USDC')                       AS non_usd_fee_fills,
       sum(ntl_x) FILTER (WHERE fee_token <> 'USDC')                     AS non_usd_fee_x,
       list(DISTINCT wallet ORDER BY wallet)                             AS wallets,
       list(DISTINCT coin ORDER BY coin)                                 AS coins,
       list(DISTINCT coalesce(dex, '') ORDER BY coalesce(dex, ''))       AS dexes
FROM g
GROUP BY builder, day
ORDER BY builder, day
