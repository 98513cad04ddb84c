-- OnchainWallet summarises one wallet on every chain over five rolling windows ending
-- now: one row per window with inflow (USD received), outflow (USD sent) and transfers
-- (a self-transfer once); tokens traded, first seen and last active are all-time and
-- repeat on every row. A whole day lies in one window band (1 = 24h .. 5 = all) unless
-- a window's start or now falls in it, so the days up to the segments' split are read
-- as daily sums per token (wallet_seg_days) except those edge days, read as legs
-- (wallet_seg_legs), and the dates after the split (today's files) as legs, each file
-- once (wallet_today_legs); all are summed per band, band being the narrowest window
-- holding the leg or day: the windows are then sums over at most five bands (exact
-- DECIMAL sums, so the same figures as summing the legs), and tokens traded counts the
-- rows' distinct (chain, token).
-- $1 address, $2 until (epoch us, inclusive), $3 and $4 the wallet segments' split
-- dates, $5 the wallet's onchain_wallet_legs segment files, $6 its onchain_wallet_days
-- ones, $7 the per-date legs files after $4 (Queries.walletArgs).
WITH e AS (
    SELECT CAST(make_timestamp($2) AS DATE) AS d0,
           CAST(make_timestamp($2) - INTERVAL 1 DAY AS DATE) AS d1,
           CAST(make_timestamp($2) - INTERVAL 7 DAY AS DATE) AS d7,
           CAST(make_timestamp($2) - INTERVAL 30 DAY AS DATE) AS d30,
           CAST(make_timestamp($2) - INTERVAL 90 DAY AS DATE) AS d90
),
x AS (
    -- whole days before today's that no window edge falls in, up to the segments' split
    SELECT chain, token, first_time AS t, inflow AS i, outflow AS o, tx_count AS n, first_time, last_time
    FROM wallet_seg_days($1, '', $3, $4, $6), e
    WHERE day < d0 AND day NOT IN (d1, d7, d30, d90)
    UNION ALL
    -- the legs of the edge days, up to now: one time range per read, so that each
    -- prunes the wallet's row groups by time (an OR of the ranges reads every one of
    -- them: a hub's 400 k legs on the large lake instead of its edge days' 20 k)
    SELECT chain, token, block_time, CASE WHEN dir = 1 THEN usd END, CASE WHEN dir = -1 THEN usd END,
           CASE WHEN NOT (self AND dir = -1) THEN 1 ELSE 0 END, block_time, block_time
    FROM (
        SELECT * FROM wallet_seg_legs($1, '', $3, $4, $5)
        WHERE block_time >= CAST(CAST(make_timestamp($2) - INTERVAL 1 DAY AS DATE) AS TIMESTAMP)
          AND block_time <= make_timestamp($2)
        UNION ALL
        SELECT * FROM wallet_seg_legs($1, '', $3, $4, $5)
        WHERE block_time >= CAST(CAST(make_timestamp($2) - INTERVAL 7 DAY AS DATE) AS TIMESTAMP)
          AND block_time < CAST(CAST(make_timestamp($2) - INTERVAL 7 DAY AS DATE) + 1 AS TIMESTAMP)
        UNION ALL
        SELECT * FROM wallet_seg_legs($1, '', $3, $4, $5)
        WHERE block_time >= CAST(CAST(make_timestamp($2) - INTERVAL 30 DAY AS DATE) AS TIMESTAMP)
          AND block_time < CAST(CAST(make_timestamp($2) - INTERVAL 30 DAY AS DATE) + 1 AS TIMESTAMP)
        UNION ALL
        SELECT * FROM wallet_seg_legs($1, '', $3, $4, $5)
        WHERE block_time >= CAST(CAST(make_timestamp($2) - INTERVAL 90 DAY AS DATE) AS TIMESTAMP)
          AND block_time < CAST(CAST(make_timestamp($2) - INTERVAL 90 DAY AS DATE) + 1 AS TIMESTAMP)
        UNION ALL
        -- every leg of the dates after the split (today's files, read once) up to now:
        -- edge day or not, a leg lands in the band its daily sum would (a whole day
        -- without an edge lies in one band), so the windows sum the same
        SELECT * FROM wallet_today_legs($1, '', $4, $7)
        WHERE block_time <= make_timestamp($2)
    )
),
-- The windows from the sums per band (exact DECIMAL sums: window k sums the bands up to k),
-- with the all-time figures beside them. Five rows of windows joined to at most five
-- band rows rather than one aggregate of fifteen filtered sums over every (chain,
-- token, band) group: the same figures in about three quarters of the time (a wallet's
-- summary costs DuckDB's fixed work per expression and per read more than its rows).
-- x is read once: DuckDB materialises a CTE that two others read.
b AS (
    SELECT CASE WHEN t > make_timestamp($2) - INTERVAL 1 DAY THEN 1
                WHEN t > make_timestamp($2) - INTERVAL 7 DAY THEN 2
                WHEN t > make_timestamp($2) - INTERVAL 30 DAY THEN 3
                WHEN t > make_timestamp($2) - INTERVAL 90 DAY THEN 4
                ELSE 5 END AS band,
           sum(i) AS i, sum(o) AS o, sum(n) AS n
    FROM x
    GROUP BY band
),
t AS (
    SELECT count(DISTINCT (chain, token)) AS tokens_traded,
           min(first_time) AS first_seen, max(last_time) AS last_active
    FROM x
)
-- One row per window, in window order.
SELECT w.name, coalesce(sum(b.i), 0)::DOUBLE AS inflow, coalesce(sum(b.o), 0)::DOUBLE AS outflow,
       coalesce(sum(b.n), 0)::BIGINT AS tx_count,
       any_value(t.tokens_traded) AS tokens_traded, any_value(t.first_seen) AS first_seen,
       any_value(t.last_active) AS last_active
FROM (VALUES (1, '24h'), (2, '7d'), (3, '30d'), (4, '90d'), (5, 'all')) w(k, name)
LEFT JOIN b ON b.band <= w.k
CROSS JOIN t
GROUP BY w.k, w.name
ORDER BY w.k;
