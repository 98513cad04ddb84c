-- OnchainWalletPnL is a wallet's daily net-flow series on one chain: one row per
-- calendar date from the first date through today (zero-filled), USD at transfer time.
-- The whole days before today up to the segments' split are read as the wallet's daily
-- sums (wallet_seg_days), today as its segments' legs up to now (wallet_seg_legs), and
-- the dates after the split (today's files, read once) as their legs up to now
-- (wallet_today_legs): exact DECIMAL sums either way.
-- $1 chain, $2 address, $3 first date (YYYY-MM-DD), $4 until (epoch us, inclusive), $5
-- and $6 the wallet segments' split dates, $7 the wallet's onchain_wallet_legs segment
-- files, $8 its onchain_wallet_days ones, $9 the per-date legs files after $6
-- (Queries.walletArgs).
WITH days AS (
    SELECT CAST(d AS DATE) AS date
    FROM generate_series(CAST($3 AS DATE), CAST(make_timestamp($4) AS DATE), INTERVAL 1 DAY) g(d)
),
x AS (
    SELECT day AS date, inflow, outflow, tx_count
    FROM wallet_seg_days($2, $1, $5, $6, $8)
    WHERE day >= CAST($3 AS DATE) AND day < CAST(make_timestamp($4) AS DATE)
    UNION ALL
    SELECT CAST(block_time AS DATE), CASE WHEN dir = 1 THEN usd END, CASE WHEN dir = -1 THEN usd END,
           CASE WHEN NOT (self AND dir = -1) THEN 1 ELSE 0 END
    FROM wallet_seg_legs($2, $1, $5, $6, $7)
    WHERE block_time >= CAST(CAST(make_timestamp($4) AS DATE) AS TIMESTAMP)
      AND block_time >= CAST(CAST($3 AS DATE) AS TIMESTAMP) AND block_time <= make_timestamp($4)
    UNION ALL
    SELECT CAST(block_time AS DATE), CASE WHEN dir = 1 THEN usd END, CASE WHEN dir = -1 THEN usd END,
           CASE WHEN NOT (self AND dir = -1) THEN 1 ELSE 0 END
    FROM wallet_today_legs($2, $1, $6, $9)
    WHERE block_time >= CAST(CAST($3 AS DATE) AS TIMESTAMP) AND block_time <= make_timestamp($4)
),
f AS (
    SELECT date, sum(inflow) AS inflow, sum(outflow) AS outflow, sum(tx_count)::BIGINT AS tx_count
    FROM x
    GROUP BY 1
)
SELECT days.date, coalesce(f.inflow, 0)::DOUBLE, coalesce(f.outflow, 0)::DOUBLE, coalesce(f.tx_count, 0)
FROM days LEFT JOIN f USING (date)
ORDER BY days.date;
