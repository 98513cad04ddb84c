-- PerpdexPositionsWindow loads what positions/match searches: each wallet's latest row
-- per coin among the snapshots within 15 minutes of the newest batch $1 (both ends
-- inclusive), reading only the date partitions those 15 minutes touch.
-- $1 newest batch.
SELECT wallet, coin, snapshot_ts, szi, entry_px, mark_px, leverage, liquidation_px, unrealized_pnl, position_value
FROM perpdex_positions
WHERE date >= CAST($1::TIMESTAMP - INTERVAL 15 MINUTE AS DATE) AND date <= CAST($1::TIMESTAMP AS DATE)
  AND snapshot_ts >= $1::TIMESTAMP - INTERVAL 15 MINUTE AND snapshot_ts <= $1::TIMESTAMP
-- A wallet never appears twice in one batch for a coin; should it, the tie-breakers
-- keep the choice deterministic.
QUALIFY row_number() OVER (PARTITION BY coin, wallet ORDER BY snapshot_ts DESC, szi DESC, entry_px, leverage) = 1;
