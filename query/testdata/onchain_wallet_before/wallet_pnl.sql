-- OnchainWalletPnL is a wallet's daily net-flow series on one chain: one row per
-- calendar date from the first date through today (zero-filled), USD at transfer time.
-- Reads the wallet's legs.
-- $1 chain, $2 address, $3 first date (YYYY-MM-DD), $4 until (epoch us, inclusive).
WITH days AS (
    SELECT CAST(d AS DATE) AS date
    FROM generate_series(CAST($3 AS DATE), CAST(make_timestamp($4) AS DATE), INTERVAL 1 DAY) g(d)
),
f AS (
    SELECT CAST(block_time AS DATE) AS date,
           sum(usd) FILTER (WHERE dir = 1) AS inflow,
           sum(usd) FILTER (WHERE dir = -1) AS outflow,
           count(*) FILTER (WHERE NOT (self AND dir = -1)) AS tx_count
    FROM onchain_legs
    WHERE wallet = $2 AND chain = $1
      AND block_time >= CAST(CAST($3 AS DATE) AS TIMESTAMP) AND block_time <= make_timestamp($4)
    GROUP BY 1
)
SELECT days.date, coalesce(f.inflow, 0)::DOUBLE, coalesce(f.outflow, 0)::DOUBLE, coalesce(f.tx_count, 0)
FROM days LEFT JOIN f USING (date)
ORDER BY days.date;
