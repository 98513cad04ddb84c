-- PerpdexWalletTrades and PerpdexTradesSummary read one wallet's trades from the
-- derived lake table (sorted by wallet: one small row group), timestamps as epoch
-- microseconds; the Go side orders them as the routes page them. $1 wallet.
SELECT asset, CAST(trade_no AS BIGINT), direction = 'long', epoch_us(open_ts), epoch_us(close_ts),
       entry_price, exit_price, max_size_token, max_size_usd, volume_usd, realized_pnl, total_fee,
       fill_count, is_complete
FROM perpdex_closed_trades
WHERE wallet = $1;
