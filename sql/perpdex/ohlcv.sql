-- PerpdexOHLCV returns price candles of one coin, oldest first. Buckets are
-- epoch-aligned (4h starts at 00, 04, ... UTC; 1d at midnight UTC).
-- From the fills each trade counts once (its buy-side fill). The venue's own candles
-- (perpdex_candles, ingested candleSnapshot answers of exactly this interval, closed by
-- the store clock) count every trade of the venue, where the fills hold only what was
-- ingested: a bucket is served from the candle unless the fills hold as many trades as
-- the candle counts (then both describe the same trades and the fills also give
-- volume_usd, which a candle does not carry: NULL).
-- $1 coin, $2 bucket width in ms, $3 from and $4 to (epoch ms, both inclusive, on the
-- bucket start), $5 limit, $6 store clock, $7 interval name.
WITH t AS (
    SELECT (epoch_ms(time) // $2) * $2 AS ts, time, tid, px, sz
    FROM perpdex_fills
    WHERE coin = $1 AND side = 'B' AND time <= $6::TIMESTAMP AND epoch_ms(time) >= $3
),
f AS (
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
),
c AS (
    SELECT epoch_ms(time) AS ts, open, high, low, close, volume, NULL::DOUBLE AS volume_usd, trades
    FROM perpdex_candles
    WHERE coin = $1 AND interval = $7 AND close_time <= $6::TIMESTAMP
      AND epoch_ms(time) >= $3 AND epoch_ms(time) <= $4
)
SELECT c.* FROM c LEFT JOIN f ON f.ts = c.ts WHERE f.trades IS DISTINCT FROM c.trades
UNION ALL
SELECT f.* FROM f LEFT JOIN c ON c.ts = f.ts WHERE c.ts IS NULL OR c.trades = f.trades
ORDER BY ts
LIMIT $5;
