-- PerpdexLiquidationMap buckets the liquidation prices of one coin's open positions in
-- the newest snapshot batch around the batch's mark: bucket i covers
-- [lo + i * width, lo + (i + 1) * width) with lo = mark * (1 - range) and width =
-- mark * bucket; the top edge mark * (1 + range) falls in the last bucket. Positions
-- without a liquidation price (0.0) or outside the range are counted, not bucketed.
-- One row per non-empty bucket (a single row with NULL i when none is).
-- $1 coin, $2 store clock, $3 range fraction, $4 bucket fraction, $5 bucket count.
WITH batch AS (
    SELECT max(snapshot_ts) AS b FROM perpdex_positions WHERE snapshot_ts <= $2::TIMESTAMP
), p AS (
    SELECT p.* FROM perpdex_positions p, batch WHERE p.snapshot_ts = batch.b AND p.coin = $1
), g AS (
    SELECT max(mark_px) AS mark, max(snapshot_ts) AS ts, count(*) AS n,
           count(*) FILTER (WHERE liquidation_px <= 0) AS no_liq,
           max(mark_px) * (1 - $3) AS lo, max(mark_px) * $4 AS width, max(mark_px) * (1 + $3) AS hi
    FROM p
), b AS (
    SELECT least(floor((p.liquidation_px - g.lo) / g.width)::BIGINT, $5 - 1) AS i, p.szi, p.position_value
    FROM p, g
    WHERE p.liquidation_px > 0 AND p.liquidation_px >= g.lo AND p.liquidation_px <= g.hi
)
SELECT g.mark, g.ts, g.n, g.no_liq, g.lo, g.width, b.i,
       coalesce(sum(b.position_value) FILTER (WHERE b.szi > 0), 0) AS long_usd,
       coalesce(sum(b.position_value) FILTER (WHERE b.szi < 0), 0) AS short_usd,
       count(b.i) FILTER (WHERE b.szi > 0) AS long_n,
       count(b.i) FILTER (WHERE b.szi < 0) AS short_n
FROM g LEFT JOIN b ON true
GROUP BY g.mark, g.ts, g.n, g.no_liq, g.lo, g.width, b.i
ORDER BY b.i;
