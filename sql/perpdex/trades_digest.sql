-- PerpdexTradesDigest: per close date, the count and a digest of the complete closed
-- trades (every field perpdex_trades_carry takes from them: the wallet, the order, the
-- direction, the times and the PnL), which decide what of the trades carry is current
-- (query/perpdex_trades_carry.go). A date's trades are not only the fills up to it: a
-- fill that closes a position the lake never saw open (a day missing, arriving late
-- later) joins the wallet's previous trade on that asset, however old, and moves its
-- close (sql/perpdex/closed_trades.sql).
SELECT CAST(CAST(close_ts AS DATE) AS VARCHAR) AS day,
       count(*) AS n,
       CAST(sum(hash(wallet, asset, trade_no, direction, open_ts, close_ts, realized_pnl)) AS VARCHAR) AS digest
FROM perpdex_closed_trades
WHERE is_complete
GROUP BY ALL
