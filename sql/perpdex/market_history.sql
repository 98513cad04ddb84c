-- PerpdexMarketHistory returns one coin's hours: the hourly mark, open interest of the
-- position batch taken on that hour, the funding rate applied on it (that of the
-- coin's funding payments, else the venue's settled rate from an ingested
-- fundingHistory answer) and the volume of trades in [hour, hour + 1h) (each trade
-- once: its buy-side fill), oldest first.
-- $1 coin, $2 start, $3 end (store clock), both inclusive.
WITH h AS (
    SELECT time AS ts, mark_px FROM perpdex_marks
    WHERE coin = $1 AND time >= $2::TIMESTAMP AND time <= $3::TIMESTAMP
), oi AS (
    SELECT snapshot_ts AS ts,
           coalesce(sum(position_value) FILTER (WHERE szi > 0), 0) AS l,
           coalesce(sum(position_value) FILTER (WHERE szi < 0), 0) AS s,
           count(*) AS n
    FROM perpdex_positions
    WHERE coin = $1 AND snapshot_ts >= $2::TIMESTAMP AND snapshot_ts <= $3::TIMESTAMP
    GROUP BY 1
), fr AS (
    SELECT time AS ts, max(funding_rate) AS rate FROM perpdex_funding
    WHERE coin = $1 AND time >= $2::TIMESTAMP AND time <= $3::TIMESTAMP
    GROUP BY 1
), vr AS (
    SELECT time AS ts, max(funding_rate) AS rate FROM perpdex_funding_rates
    WHERE coin = $1 AND source = 'history' AND time >= $2::TIMESTAMP AND time <= $3::TIMESTAMP
    GROUP BY 1
), v AS (
    SELECT date_trunc('hour', time) AS ts, sum(px * sz) AS vol, count(*) AS n FROM perpdex_fills
    WHERE coin = $1 AND side = 'B' AND time >= $2::TIMESTAMP AND time <= $3::TIMESTAMP
    GROUP BY 1
)
SELECT h.ts, h.mark_px, oi.l, oi.s, oi.n, coalesce(fr.rate, vr.rate), coalesce(v.vol, 0), coalesce(v.n, 0)
FROM h
LEFT JOIN oi USING (ts)
LEFT JOIN fr USING (ts)
LEFT JOIN vr USING (ts)
LEFT JOIN v USING (ts)
ORDER BY h.ts;
