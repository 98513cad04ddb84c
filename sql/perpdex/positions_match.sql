-- PerpdexPositionsMatch finds open positions like the one described: same coin and
-- side, leverage within 0.5, entry price inside the tightest of three tolerance bands
-- (0.05%, 0.5%, 1.0%) that holds any match, ranked by closeness of entry to the mark.
-- Only each wallet's latest snapshot within 15 minutes of the newest batch counts.
-- $1 coin, $2 side sign (1 long, -1 short), $3 leverage, $4 entry price, $5 mark hint,
-- $6 limit, $7 store clock.
WITH newest AS (
    SELECT max(snapshot_ts) AS b FROM perpdex_positions WHERE snapshot_ts <= $7::TIMESTAMP
), cand AS (
    SELECT p.wallet, p.coin, p.snapshot_ts, p.szi, p.entry_px, p.mark_px, p.leverage, p.liquidation_px,
           p.unrealized_pnl, p.position_value, abs(p.entry_px - $4) / $4 AS dist
    FROM perpdex_positions p, newest n
    WHERE p.snapshot_ts >= n.b - INTERVAL 15 MINUTE AND p.snapshot_ts <= n.b
      AND p.coin = $1
    QUALIFY row_number() OVER (PARTITION BY p.wallet ORDER BY p.snapshot_ts DESC) = 1
), banded AS (
    SELECT *, CASE WHEN dist <= 0.0005 THEN 1 WHEN dist <= 0.005 THEN 2 WHEN dist <= 0.01 THEN 3 END AS band
    FROM cand
    WHERE sign(szi) = $2 AND abs(leverage - $3) <= 0.5
)
SELECT wallet, coin, snapshot_ts, szi, entry_px, mark_px, leverage, liquidation_px, unrealized_pnl,
       position_value, dist, band
FROM banded
WHERE band = (SELECT min(band) FROM banded)
ORDER BY abs(entry_px - $5), dist, wallet
LIMIT $6;
