-- PerpdexOHLCV returns price candles of one coin from its fills, oldest first. Each
-- trade counts once (its buy-side fill); buckets are epoch-aligned (4h starts at 00,
-- 04, ... UTC; 1d at midnight UTC).
-- $1 coin, $2 bucket width in ms, $3 from and $4 to (epoch ms, both inclusive, on the
-- bucket start), $5 limit, $6 store clock.
WITH t AS (
    SELECT (epoch_ms(time) // $2) * $2 AS ts, time, tid, px, sz
    FROM perpdex_fills
    WHERE coin = $1 AND side = 'B' AND time <= $6::TIMESTAMP AND epoch_ms(time) >= $3
)
SELECT ts,
       arg_min(px, (time, tid)) AS open,
       max(px) AS high,
       min(px) AS low,
       arg_max(px, (time, tid)) AS close,
       sum(sz) AS volume,
       sum(px * sz) AS volume_usd,
       count(*) AS trades
FROM t
WHERE ts >= $3 AND ts <= $4
GROUP BY ts
ORDER BY ts
LIMIT $5;
