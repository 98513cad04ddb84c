-- PerpdexWalletPositions returns one wallet's open positions in the newest position
-- snapshot batch at or before the clock, largest notional first. The first column is
-- the batch time; a wallet flat in the batch gives one row of NULL position columns.
-- $1 wallet, $2 store clock.
WITH batch AS (
    SELECT max(snapshot_ts) AS b FROM perpdex_positions WHERE snapshot_ts <= $2::TIMESTAMP
)
SELECT batch.b, p.coin, p.szi, p.entry_px, p.mark_px, p.leverage, p.liquidation_px, p.unrealized_pnl, p.position_value
FROM batch
LEFT JOIN perpdex_positions p ON p.snapshot_ts = batch.b AND p.wallet = $1
ORDER BY p.position_value DESC NULLS LAST, p.coin;
