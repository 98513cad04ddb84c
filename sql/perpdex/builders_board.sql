-- PerpdexBuildersBoard is builder_metrics.sql for the builders board (every builder,
-- grouped by builder, over [$1, $2], both inclusive) with the window's complete days
-- ($3 <= day < $4, midnights: query/perpdex_daily.go perpdexBoardDays) from their
-- published partial aggregates (perpdex_builders_daily) and raw fills only for the
-- partial days at the edges ([$1, $3) and [$4, $2]); $3 = $4 = the epoch reads every
-- fill raw. Same rows and bits as builder_metrics.sql: exact decimal sums, distinct
-- counts and the median over the days' kept values. The edge rows are summed per
-- (builder, day) with the expressions of sql/perpdex/builders_daily.sql, so both parts
-- have one shape.
WITH f AS (
    SELECT *, px * sz AS ntl, CAST(px * sz AS DECIMAL(38, 10)) AS ntl_x,
           CAST(builder_fee AS DECIMAL(38, 10)) AS builder_fee_x, CAST(fee AS DECIMAL(38, 10)) AS fee_x,
           CAST(deployer_fee AS DECIMAL(38, 10)) AS deployer_fee_x, CAST(closed_pnl AS DECIMAL(38, 10)) AS closed_pnl_x
    FROM (SELECT * FROM perpdex_fills
          WHERE builder IS NOT NULL AND time >= $1::TIMESTAMP AND time < $3::TIMESTAMP
            AND date >= CAST($1::TIMESTAMP AS DATE) AND date <= CAST($3::TIMESTAMP AS DATE)
          UNION ALL
          SELECT * FROM perpdex_fills
          WHERE builder IS NOT NULL AND time >= $4::TIMESTAMP AND time >= $1::TIMESTAMP AND time <= $2::TIMESTAMP
            AND date >= CAST($4::TIMESTAMP AS DATE) AND date >= CAST($1::TIMESTAMP AS DATE) AND date <= CAST($2::TIMESTAMP AS DATE))
), g AS (
    SELECT *, row_number() OVER (PARTITION BY builder, tid ORDER BY wallet) AS side_no FROM f
), d AS (
    SELECT builder, fee_x, volume_x, share_x, fills, node_fee_x, trader_fee_x, deployer_fee_x, closed_pnl_x,
           crossed_fills, first_seen, last_seen, fee_rates_bps, buy_x, sell_x, non_usd_fee_fills, non_usd_fee_x,
           wallets, coins, dexes, day
    FROM perpdex_builders_daily
    WHERE day >= CAST($3::TIMESTAMP AS DATE) AND day < CAST($4::TIMESTAMP AS DATE)
      AND date >= CAST($3::TIMESTAMP AS DATE) AND date < CAST($4::TIMESTAMP AS DATE)
    UNION ALL
    SELECT builder,
           sum(builder_fee_x), sum(ntl_x), sum(ntl_x) FILTER (WHERE side_no = 1), count(*),
           sum(fee_x - coalesce(builder_fee_x, 0) - coalesce(deployer_fee_x, 0)), sum(fee_x), sum(deployer_fee_x),
           sum(closed_pnl_x), count(*) FILTER (WHERE crossed), min(time), max(time),
           list(builder_fee / ntl * 10000) FILTER (WHERE builder_fee > 0),
           sum(ntl_x) FILTER (WHERE side = 'B'), sum(ntl_x) FILTER (WHERE side = 'A'),
           count(*) FILTER (WHERE fee_token <> 'USDC'), sum(ntl_x) FILTER (WHERE fee_token <> 'USDC'),
           list(DISTINCT wallet), list(DISTINCT coin), list(DISTINCT coalesce(dex, '')), CAST(time AS DATE)
    FROM g
    GROUP BY builder, CAST(time AS DATE)
), rates AS (
    SELECT builder, median(r) AS p50
    FROM (SELECT builder, unnest(fee_rates_bps) AS r FROM d)
    GROUP BY builder
)
SELECT d.builder                                                  AS k,
       sum(fee_x)::DOUBLE                                         AS fee_usd,
       sum(volume_x)::DOUBLE                                      AS volume_usd,
       sum(share_x)::DOUBLE                                       AS share_volume_usd,
       sum(fills)::BIGINT                                         AS fills,
       len(list_distinct(flatten(list(wallets))))::BIGINT         AS users,
       sum(node_fee_x)::DOUBLE                                    AS fee_usd_node,
       sum(trader_fee_x)::DOUBLE                                  AS trader_fee_usd,
       coalesce(sum(deployer_fee_x), 0)::DOUBLE                   AS deployer_fee_usd,
       sum(closed_pnl_x)::DOUBLE                                  AS closed_pnl_usd,
       count(DISTINCT day)                                        AS active_days,
       sum(crossed_fills)::BIGINT                                 AS crossed_fills,
       min(first_seen)                                            AS first_seen,
       max(last_seen)                                             AS last_seen,
       any_value(rates.p50)                                       AS fee_rate_bps_p50,
       coalesce(sum(buy_x), 0)::DOUBLE                            AS buy_volume_usd,
       coalesce(sum(sell_x), 0)::DOUBLE                           AS sell_volume_usd,
       sum(non_usd_fee_fills)::BIGINT                             AS non_usd_fee_fills,
       coalesce(sum(non_usd_fee_x), 0)::DOUBLE                    AS non_usd_fee_volume_usd,
       len(list_distinct(flatten(list(coins))))::BIGINT           AS assets,
       len(list_distinct(flatten(list(dexes))))::BIGINT           AS dexes,
       count(DISTINCT d.builder)                                  AS builders
FROM d LEFT JOIN rates ON rates.builder = d.builder
GROUP BY d.builder
ORDER BY k;
