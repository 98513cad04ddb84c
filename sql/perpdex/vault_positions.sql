-- PerpdexVaultPositions returns one vault's open positions in the newest snapshot
-- batch at or before the store clock (the batch is venue-wide: a vault flat at that
-- batch has none), largest position value first.
-- $1 vault, $2 the store clock.
WITH b AS (
    SELECT max(snapshot_ts) AS ts FROM perpdex_positions WHERE snapshot_ts <= $2::TIMESTAMP
)
SELECT p.snapshot_ts, b.ts, p.coin, p.szi, p.entry_px, p.mark_px, p.leverage, p.liquidation_px,
       p.unrealized_pnl, p.position_value
FROM b
LEFT JOIN perpdex_positions p ON p.snapshot_ts = b.ts AND p.wallet = $1
ORDER BY p.position_value DESC, p.coin;
