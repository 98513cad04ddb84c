-- PerpdexWalletTrades returns one wallet's reconstructed trades, newest close first.
-- $1 wallet, $2 asset or NULL, $3 close_ts from, $4 close_ts to (both inclusive),
-- $5..$7 keyset (close_ts, asset, trade_no) of the last row served or NULL, $8 limit.
-- The route pages the per-wallet trade index instead (query/perpdex_trades.go); this
-- statement is its SQL reference, run by the index tests and the benchmark.
SELECT asset, direction, open_ts, close_ts, entry_price, exit_price, max_size_token, max_size_usd,
       volume_usd, realized_pnl, total_fee, fill_count, is_complete, trade_no
FROM perpdex_closed_trades
WHERE wallet = $1
  AND ($2::VARCHAR IS NULL OR asset = $2)
  AND close_ts >= $3::TIMESTAMP AND close_ts <= $4::TIMESTAMP
  AND ($5::TIMESTAMP IS NULL
       OR close_ts < $5::TIMESTAMP
       OR (close_ts = $5::TIMESTAMP AND (asset < $6 OR (asset = $6 AND trade_no < $7))))
ORDER BY close_ts DESC, asset DESC, trade_no DESC
LIMIT $8;
