-- PerpdexPositionsSnaps: one positions date summed per wallet and snapshot for the
-- perpetuals boards' edge days (lake perpdex_positions_snaps; sql/perpdex/board.sql reads
-- the leverage of a window's partial days and the uPnL of its position batches from
-- here). $1 the date. The leverage is an exact decimal sum, as
-- sql/perpdex/positions_daily.sql; the uPnL is the double sum the board took over the
-- same rows (a board sums one row per wallet and snapshot).
SELECT wallet,
       snapshot_ts,
       sum(CAST(leverage AS DECIMAL(38, 10)))     AS leverage_x,
       count(leverage)                            AS leverage_n,
       sum(unrealized_pnl)                        AS unrealized_pnl
FROM perpdex_positions
WHERE date = $1::DATE
GROUP BY wallet, snapshot_ts
