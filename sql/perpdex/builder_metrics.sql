-- PerpdexBuilderMetrics computes the builder metric set over builder-code fills in a
-- window, grouped by one key: builder, asset, dex, day, wallet or total (one group).
-- $1 builder or NULL for every builder, $2 start, $3 end (both inclusive), $4 key.
-- share volume counts each trade once per group even when the group routed both of its
-- sides (the venue volume it is compared with counts each trade once, its buy side).
-- USD sums add exact decimals (x, each term rounded to 1e-10 first), not doubles: a
-- parallel double sum depends on the order its threads add in, so a figure near half a
-- cent rounded either way from one run to the next (seen in the point-in-time test).
WITH f AS (
    SELECT *, px * sz AS ntl, CAST(px * sz AS DECIMAL(38, 10)) AS ntl_x,
           CAST(builder_fee AS DECIMAL(38, 10)) AS builder_fee_x, CAST(fee AS DECIMAL(38, 10)) AS fee_x,
           CAST(deployer_fee AS DECIMAL(38, 10)) AS deployer_fee_x, CAST(closed_pnl AS DECIMAL(38, 10)) AS closed_pnl_x,
           CASE $4 WHEN 'builder' THEN builder
                   WHEN 'asset' THEN coin
                   WHEN 'dex' THEN coalesce(dex, '')
                   WHEN 'day' THEN strftime(CAST(time AS DATE), '%Y-%m-%d')
                   WHEN 'wallet' THEN wallet
                   ELSE '' END AS k
    FROM perpdex_fills
    WHERE builder IS NOT NULL
      AND ($1::VARCHAR IS NULL OR builder = $1)
      AND time >= $2::TIMESTAMP AND time <= $3::TIMESTAMP
), g AS (
    SELECT *, row_number() OVER (PARTITION BY k, builder, tid ORDER BY wallet) AS side_no FROM f
)
SELECT k,
       sum(builder_fee_x)::DOUBLE                                         AS fee_usd,
       sum(ntl_x)::DOUBLE                                                 AS volume_usd,
       (sum(ntl_x) FILTER (WHERE side_no = 1))::DOUBLE                    AS share_volume_usd,
       count(*)                                                           AS fills,
       count(DISTINCT wallet)                                             AS users,
       sum(fee_x - coalesce(builder_fee_x, 0) - coalesce(deployer_fee_x, 0))::DOUBLE AS fee_usd_node,
       sum(fee_x)::DOUBLE                                                 AS trader_fee_usd,
       coalesce(sum(deployer_fee_x), 0)::DOUBLE                           AS deployer_fee_usd,
       sum(closed_pnl_x)::DOUBLE                                          AS closed_pnl_usd,
       count(DISTINCT CAST(time AS DATE))                                 AS active_days,
       count(*) FILTER (WHERE crossed)                                    AS crossed_fills,
       min(time)                                                          AS first_seen,
       max(time)                                                          AS last_seen,
       median(builder_fee / ntl * 10000) FILTER (WHERE builder_fee > 0)  AS fee_rate_bps_p50,
       coalesce(sum(ntl_x) FILTER (WHERE side = 'B'), 0)::DOUBLE          AS buy_volume_usd,
       coalesce(sum(ntl_x) FILTER (WHERE side = 'A'), 0)::DOUBLE          AS sell_volume_usd,
       count(*) FILTER (WHERE fee_token <> 'USDC')                        AS non_usd_fee_fills,
       coalesce(sum(ntl_x) FILTER (WHERE fee_token <> 'USDC'), 0)::DOUBLE AS non_usd_fee_volume_usd,
       count(DISTINCT coin)                                               AS assets,
       count(DISTINCT coalesce(dex, ''))                                  AS dexes,
       count(DISTINCT builder)                                            AS builders
FROM g
GROUP BY k
ORDER BY k;
