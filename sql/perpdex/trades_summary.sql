-- PerpdexTradesSummary aggregates one wallet's trades that opened or closed in a
-- rolling window, overall (asset NULL) and per asset. Open trades count; their close_ts
-- is their latest fill. $1 wallet, $2 window start, $3 window end. The route computes
-- the same figures in Go from the per-wallet trade index (query/perpdex_trades.go);
-- this statement is their SQL reference, run by the index tests and the benchmark.
WITH t AS (
    SELECT *, (epoch_us(close_ts) - epoch_us(open_ts)) // 1000000 AS dur
    FROM perpdex_closed_trades
    WHERE wallet = $1
      AND (open_ts >= $2::TIMESTAMP OR close_ts >= $2::TIMESTAMP)
      AND open_ts <= $3::TIMESTAMP
)
SELECT CASE WHEN grouping(asset) = 1 THEN NULL ELSE asset END AS asset,
       count(*)                                                          AS trade_count,
       count(*) FILTER (WHERE is_complete)                               AS closed_trade_count,
       count(*) FILTER (WHERE NOT is_complete)                           AS open_trade_count,
       coalesce(sum(fill_count), 0)::BIGINT                              AS fill_count,
       count(*) FILTER (WHERE realized_pnl > 0)                          AS wins,
       count(*) FILTER (WHERE realized_pnl < 0)                          AS losses,
       count(*) FILTER (WHERE direction = 'long')                        AS long_trades,
       count(*) FILTER (WHERE direction = 'short')                       AS short_trades,
       count(*) FILTER (WHERE direction = 'long' AND realized_pnl > 0)   AS long_wins,
       count(*) FILTER (WHERE direction = 'short' AND realized_pnl > 0)  AS short_wins,
       sum(realized_pnl)                                                 AS pnl,
       coalesce(sum(realized_pnl) FILTER (WHERE realized_pnl > 0), 0)    AS total_winning,
       coalesce(sum(realized_pnl) FILTER (WHERE realized_pnl < 0), 0)    AS total_losing,
       median(realized_pnl) FILTER (WHERE realized_pnl > 0)              AS median_gain,
       median(realized_pnl) FILTER (WHERE realized_pnl < 0)              AS median_loss,
       median(dur)::DOUBLE                                               AS median_duration,
       avg(dur)                                                          AS avg_duration,
       max(dur)::DOUBLE                                                  AS max_duration,
       median(max_size_usd)                                              AS median_size,
       avg(max_size_usd)                                                 AS avg_size,
       max(max_size_usd)                                                 AS max_size,
       sum(total_fee)                                                    AS fees,
       sum(volume_usd)                                                   AS volume,
       min(open_ts)                                                      AS first_trade_ts,
       max(close_ts)                                                     AS last_trade_ts,
       min(open_ts) FILTER (WHERE open_ts >= $2::TIMESTAMP)              AS first_open_ts,
       max(close_ts) FILTER (WHERE is_complete)                          AS last_close_ts
FROM t
GROUP BY GROUPING SETS ((), (asset))
ORDER BY grouping(asset) DESC, volume DESC, asset;
