-- PerpdexWalletTrades and PerpdexTradesSummary: closed_trades_index.sql reading only the
-- files of the wallet's bucket ($2: a glob of its history and recent segments) rather
-- than the view over every bucket, whose 32 files' footers and row-group statistics a
-- wallet filter checks per request. $1 wallet.
SELECT asset, CAST(trade_no AS BIGINT), direction = 'long', epoch_us(open_ts), epoch_us(close_ts),
       entry_price, exit_price, max_size_token, max_size_usd, volume_usd, realized_pnl, total_fee,
       fill_count, is_complete
FROM read_parquet($2, hive_partitioning = false)
WHERE wallet = $1;
