-- OnchainWallet summarises one wallet on every chain over five rolling windows ending
-- now: one row per window with inflow (USD received), outflow (USD sent) and transfers
-- (a self-transfer once); tokens traded, first seen and last active are all-time and
-- repeat on every row. Reads the wallet's legs (onchain_legs) in one pass, grouped
-- once by (chain, token, band), band being the narrowest window holding the leg (1 =
-- 24h .. 5 = all): the windows are then sums over a few hundred groups (exact DECIMAL
-- sums, so the same figures), and tokens traded counts the groups' (chain, token).
-- $1 address, $2 until (epoch us, inclusive).
WITH g AS (
    SELECT chain, token,
           CASE WHEN block_time > make_timestamp($2) - INTERVAL 1 DAY THEN 1
                WHEN block_time > make_timestamp($2) - INTERVAL 7 DAY THEN 2
                WHEN block_time > make_timestamp($2) - INTERVAL 30 DAY THEN 3
                WHEN block_time > make_timestamp($2) - INTERVAL 90 DAY THEN 4
                ELSE 5 END AS band,
           sum(usd) FILTER (WHERE dir = 1) AS i, sum(usd) FILTER (WHERE dir = -1) AS o,
           count(*) FILTER (WHERE NOT (self AND dir = -1)) AS n,
           min(block_time) AS first_seen, max(block_time) AS last_active
    FROM onchain_legs
    WHERE wallet = $1 AND block_time <= make_timestamp($2)
    GROUP BY ALL
),
a AS (
    SELECT count(DISTINCT (chain, token)) AS tokens_traded,
           min(first_seen) AS first_seen, max(last_active) AS last_active,
           coalesce(sum(i) FILTER (WHERE band <= 1), 0)::DOUBLE AS in1,
           coalesce(sum(o) FILTER (WHERE band <= 1), 0)::DOUBLE AS out1,
           coalesce(sum(n) FILTER (WHERE band <= 1), 0)::BIGINT AS n1,
           coalesce(sum(i) FILTER (WHERE band <= 2), 0)::DOUBLE AS in2,
           coalesce(sum(o) FILTER (WHERE band <= 2), 0)::DOUBLE AS out2,
           coalesce(sum(n) FILTER (WHERE band <= 2), 0)::BIGINT AS n2,
           coalesce(sum(i) FILTER (WHERE band <= 3), 0)::DOUBLE AS in3,
           coalesce(sum(o) FILTER (WHERE band <= 3), 0)::DOUBLE AS out3,
           coalesce(sum(n) FILTER (WHERE band <= 3), 0)::BIGINT AS n3,
           coalesce(sum(i) FILTER (WHERE band <= 4), 0)::DOUBLE AS in4,
           coalesce(sum(o) FILTER (WHERE band <= 4), 0)::DOUBLE AS out4,
           coalesce(sum(n) FILTER (WHERE band <= 4), 0)::BIGINT AS n4,
           coalesce(sum(i), 0)::DOUBLE AS in5,
           coalesce(sum(o), 0)::DOUBLE AS out5,
           coalesce(sum(n), 0)::BIGINT AS n5
    FROM g
)
-- One row per window, in window order (unnest keeps list order).
SELECT unnest(['24h', '7d', '30d', '90d', 'all']) AS name,
       unnest([in1, in2, in3, in4, in5]) AS inflow,
       unnest([out1, out2, out3, out4, out5]) AS outflow,
       unnest([n1, n2, n3, n4, n5]) AS tx_count,
       tokens_traded, first_seen, last_active
FROM a;
