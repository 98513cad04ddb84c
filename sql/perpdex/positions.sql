-- PerpdexPositions returns the open positions of the newest position snapshot batch at
-- or before the clock, largest notional first, with the holder's current labels.
-- $1 coin|NULL, $2 side sign (1 long, -1 short)|NULL, $3 store clock,
-- $4..$6 keyset (position_value, coin, wallet) or NULL, $7 the snapshot of today's
-- labels at the clock (perpdex_cohorts_at, query/perpdex_cohorts_at.go), $8 limit.
WITH batch AS (
    SELECT max(snapshot_ts) AS b FROM perpdex_positions WHERE snapshot_ts <= $3::TIMESTAMP
)
SELECT p.snapshot_ts, p.wallet, p.coin, p.szi, p.entry_px, p.mark_px, p.leverage, p.liquidation_px,
       p.unrealized_pnl, p.position_value, c.size_cohort, c.pnl_cohort
FROM perpdex_positions p
JOIN batch ON p.snapshot_ts = batch.b
LEFT JOIN perpdex_cohorts_at($7::TIMESTAMP) c ON c.wallet = p.wallet
WHERE ($1::VARCHAR IS NULL OR p.coin = $1)
  AND ($2::INTEGER IS NULL OR sign(p.szi) = $2)
  AND ($4::DOUBLE IS NULL OR p.position_value < $4
       OR (p.position_value = $4 AND (p.coin > $5 OR (p.coin = $5 AND p.wallet > $6))))
ORDER BY p.position_value DESC, p.coin, p.wallet
LIMIT $8;
