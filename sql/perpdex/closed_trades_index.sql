-- PerpdexTradeIndex reads perpdex_closed_trades once per rebuild into the store's
-- per-wallet index (query/perpdex_derived.go), grouped by wallet; the per-wallet routes
-- then read only their wallet's rows. Timestamps as epoch microseconds.
SELECT wallet, asset, CAST(trade_no AS BIGINT), direction = 'long', epoch_us(open_ts), epoch_us(close_ts),
       entry_price, exit_price, max_size_token, max_size_usd, volume_usd, realized_pnl, total_fee,
       fill_count, is_complete
FROM perpdex_closed_trades
ORDER BY wallet, close_ts, asset, trade_no;
