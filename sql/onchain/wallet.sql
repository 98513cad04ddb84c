-- OnchainWallet summarises one wallet on every chain over five rolling windows ending
-- now: one row per window with inflow (USD received), outflow (USD sent) and transfers
-- (a self-transfer once); tokens traded, first seen and last active are all-time and
-- repeat on every row. Reads the wallet's legs (onchain_legs_mem) in one pass: each
-- window's figures are filtered aggregates of the same scan.
-- $1 address, $2 until (epoch us, inclusive).
WITH tx AS (
    SELECT chain, token, block_time, dir, self, usd
    FROM onchain_legs_mem
    WHERE wallet = $1 AND block_time <= make_timestamp($2)
),
a AS (
    SELECT count(DISTINCT (chain, token)) AS tokens_traded,
           min(block_time) AS first_seen, max(block_time) AS last_active,
           coalesce(sum(usd) FILTER (WHERE dir = 1 AND block_time > make_timestamp($2) - INTERVAL 1 DAY), 0)::DOUBLE AS in1,
           coalesce(sum(usd) FILTER (WHERE dir = -1 AND block_time > make_timestamp($2) - INTERVAL 1 DAY), 0)::DOUBLE AS out1,
           count(*) FILTER (WHERE NOT (self AND dir = -1) AND block_time > make_timestamp($2) - INTERVAL 1 DAY) AS n1,
           coalesce(sum(usd) FILTER (WHERE dir = 1 AND block_time > make_timestamp($2) - INTERVAL 7 DAY), 0)::DOUBLE AS in2,
           coalesce(sum(usd) FILTER (WHERE dir = -1 AND block_time > make_timestamp($2) - INTERVAL 7 DAY), 0)::DOUBLE AS out2,
           count(*) FILTER (WHERE NOT (self AND dir = -1) AND block_time > make_timestamp($2) - INTERVAL 7 DAY) AS n2,
           coalesce(sum(usd) FILTER (WHERE dir = 1 AND block_time > make_timestamp($2) - INTERVAL 30 DAY), 0)::DOUBLE AS in3,
           coalesce(sum(usd) FILTER (WHERE dir = -1 AND block_time > make_timestamp($2) - INTERVAL 30 DAY), 0)::DOUBLE AS out3,
           count(*) FILTER (WHERE NOT (self AND dir = -1) AND block_time > make_timestamp($2) - INTERVAL 30 DAY) AS n3,
           coalesce(sum(usd) FILTER (WHERE dir = 1 AND block_time > make_timestamp($2) - INTERVAL 90 DAY), 0)::DOUBLE AS in4,
           coalesce(sum(usd) FILTER (WHERE dir = -1 AND block_time > make_timestamp($2) - INTERVAL 90 DAY), 0)::DOUBLE AS out4,
           count(*) FILTER (WHERE NOT (self AND dir = -1) AND block_time > make_timestamp($2) - INTERVAL 90 DAY) AS n4,
           coalesce(sum(usd) FILTER (WHERE dir = 1 AND TRUE), 0)::DOUBLE AS in5,
           coalesce(sum(usd) FILTER (WHERE dir = -1 AND TRUE), 0)::DOUBLE AS out5,
           count(*) FILTER (WHERE NOT (self AND dir = -1) AND TRUE) AS n5
    FROM tx
)
-- One row per window, in window order (unnest keeps list order).
SELECT unnest(['24h', '7d', '30d', '90d', 'all']) AS name,
       unnest([in1, in2, in3, in4, in5]) AS inflow,
       unnest([out1, out2, out3, out4, out5]) AS outflow,
       unnest([n1, n2, n3, n4, n5]) AS tx_count,
       tokens_traded, first_seen, last_active
FROM a;
