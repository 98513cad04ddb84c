-- PerpdexMarkets returns one row per coin: latest mark, open interest in the newest
-- position batch, latest funding rate (payments', or the venue's settled rate) and the
-- last 24 hours' volume.
-- $1 store clock.
WITH coins AS (
    SELECT DISTINCT coin FROM perpdex_marks WHERE time <= $1::TIMESTAMP
), mark AS (
    SELECT coin, arg_max(mark_px, time) AS mark_px, max(time) AS mark_ts
    FROM perpdex_marks WHERE time <= $1::TIMESTAMP GROUP BY coin
), batch AS (
    SELECT max(snapshot_ts) AS b FROM perpdex_positions WHERE snapshot_ts <= $1::TIMESTAMP
), oi AS (
    SELECT coin,
           coalesce(sum(position_value) FILTER (WHERE szi > 0), 0) AS oi_long,
           coalesce(sum(position_value) FILTER (WHERE szi < 0), 0) AS oi_short,
           count(*) AS positions
    FROM perpdex_positions, batch WHERE snapshot_ts = batch.b GROUP BY coin
), fund AS (
    -- The rate of the newest funding payment, or of the venue's newest settled rate
    -- (ingested fundingHistory), whichever is later; a payment wins a tie.
    SELECT coin, arg_max(funding_rate, (time, pref)) AS rate
    FROM (
        SELECT coin, time, funding_rate, 1 AS pref FROM perpdex_funding
        WHERE time <= $1::TIMESTAMP AND time > $1::TIMESTAMP - INTERVAL 2 DAY
        UNION ALL
        SELECT coin, time, funding_rate, 0 AS pref FROM perpdex_funding_rates
        WHERE source = 'history' AND time <= $1::TIMESTAMP AND time > $1::TIMESTAMP - INTERVAL 2 DAY
    )
    GROUP BY coin
), vol AS (
    SELECT coin, sum(px * sz) AS volume, count(*) AS trades
    FROM perpdex_fills
    WHERE side = 'B' AND time > $1::TIMESTAMP - INTERVAL 24 HOUR AND time <= $1::TIMESTAMP
    GROUP BY coin
)
SELECT c.coin, m.mark_px, m.mark_ts, coalesce(oi.oi_long, 0), coalesce(oi.oi_short, 0), coalesce(oi.positions, 0),
       fund.rate, coalesce(vol.volume, 0), coalesce(vol.trades, 0)
FROM coins c
JOIN mark m USING (coin)
LEFT JOIN oi USING (coin)
LEFT JOIN fund USING (coin)
LEFT JOIN vol USING (coin)
ORDER BY coalesce(vol.volume, 0) DESC, c.coin;
