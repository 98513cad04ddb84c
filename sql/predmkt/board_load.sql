-- PredmktLoadBoard reads back the board file $1 published for hour $2 (by an earlier process or `mdq rebuild`).
SELECT category, wallet, pseudonym, display_name, realized_pnl, pnl_24h, pnl_7d, pnl_30d,
       resolved_markets, hit_rate, hit_rate_ci, volume_all, volume_24h, volume_7d, volume_30d,
       trades_all, trades_24h, trades_7d, trades_30d, avg_trade_usd, markets, first_ts, last_ts
FROM read_parquet($1, hive_partitioning = false)
WHERE built_ts = $2;
