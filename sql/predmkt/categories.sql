-- PredmktCategories aggregates markets and trading per category.
-- $1 the store clock in epoch ms. Point in time: markets listed, resolutions made and
-- fills done by $1 only; a market is closed at $1 once it is closed and its end passed. Windows are [$1 - width, $1]; lifetime figures count
-- fills at or before $1. Volume and trade counts use taker fills only (each tape trade
-- once); traders count every wallet with a fill, taker or maker. USD is summed as
-- integer micro-USD so the cent rounding never depends on summation order.
WITH mk AS (
    SELECT m.category,
           count(*)                                                          AS markets,
           count(*) FILTER (WHERE NOT (m.closed AND epoch_ms(m.end_ts) <= $1)) AS open_markets,
           count(*) FILTER (WHERE r.condition_id IS NOT NULL AND NOT r.invalid AND r.winning_index IS NOT NULL) AS resolved,
           count(*) FILTER (WHERE r.invalid)                                 AS invalid
    FROM predmkt_markets m
    LEFT JOIN (SELECT * FROM predmkt_resolutions WHERE epoch_ms(resolved_ts) <= $1) r ON r.condition_id = m.condition_id
    WHERE epoch_ms(m.created_ts) <= $1
    GROUP BY m.category
), tr AS (
    SELECT m.category,
           CAST(coalesce(sum(CAST(round(t.usd * 1e6) AS BIGINT)) FILTER (WHERE t.role = 'taker' AND t.ts >= $1 - 86400000), 0) AS BIGINT)  AS vol_24h,
           CAST(coalesce(sum(CAST(round(t.usd * 1e6) AS BIGINT)) FILTER (WHERE t.role = 'taker' AND t.ts >= $1 - 604800000), 0) AS BIGINT) AS vol_7d,
           CAST(coalesce(sum(CAST(round(t.usd * 1e6) AS BIGINT)) FILTER (WHERE t.role = 'taker'), 0) AS BIGINT)                            AS vol_all,
           count(*) FILTER (WHERE t.role = 'taker' AND t.ts >= $1 - 86400000)                                                             AS trades_24h,
           count(DISTINCT t.wallet) FILTER (WHERE t.ts >= $1 - 86400000)                                                                 AS traders_24h,
           count(DISTINCT t.wallet)                                                                                                       AS traders_all,
           max(t.ts)                                                                                                                      AS last_ts
    FROM predmkt_trades t
    JOIN predmkt_markets m ON m.condition_id = t.condition_id
    WHERE t.ts <= $1
    GROUP BY m.category
)
SELECT mk.category, mk.markets, mk.open_markets, mk.resolved, mk.invalid,
       coalesce(tr.vol_24h, 0), coalesce(tr.vol_7d, 0), coalesce(tr.vol_all, 0),
       coalesce(tr.trades_24h, 0), coalesce(tr.traders_24h, 0), coalesce(tr.traders_all, 0), tr.last_ts
FROM mk LEFT JOIN tr ON tr.category = mk.category;
