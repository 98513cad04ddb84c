-- PerpdexWalletTrades and PerpdexTradesSummary at a clock earlier than a wallet's last
-- fill: the wallet's trades reconstructed from its fills at or before the clock, in the
-- columns of closed_trades_index.sql. The placeholder below is closed_trades.sql (embedded, not
-- input) run with $1 = the wallet, $2 = the wallet followed by one character (the range
-- holding that one address: every address has the same length) and $3 = the clock.
SELECT asset, CAST(trade_no AS BIGINT), direction = 'long', epoch_us(open_ts), epoch_us(close_ts),
       entry_price, exit_price, max_size_token, max_size_usd, volume_usd, realized_pnl, total_fee,
       fill_count, is_complete
FROM (
__TRADES__
) ct;
