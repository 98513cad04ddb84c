-- OnchainWallet summarises one wallet on every chain over five rolling windows ending
-- now: one row per window with inflow (USD received), outflow (USD sent) and transfers
-- (a self-transfer once); tokens traded, first seen and last active are all-time and
-- repeat on every row. Reads the wallet's legs (onchain_legs_mem).
-- $1 address, $2 until (epoch us, inclusive).
WITH tx AS (
    SELECT chain, token, block_time, dir, self, usd
    FROM onchain_legs_mem
    WHERE wallet = $1 AND block_time <= make_timestamp($2)
),
w(name, ord, since) AS (
    VALUES ('24h', 1, make_timestamp($2) - INTERVAL 1 DAY),
           ('7d', 2, make_timestamp($2) - INTERVAL 7 DAY),
           ('30d', 3, make_timestamp($2) - INTERVAL 30 DAY),
           ('90d', 4, make_timestamp($2) - INTERVAL 90 DAY),
           ('all', 5, NULL)
),
life AS (
    SELECT count(DISTINCT (chain, token)) AS tokens_traded,
           min(block_time) AS first_seen, max(block_time) AS last_active
    FROM tx
)
SELECT w.name,
       coalesce(sum(tx.usd) FILTER (WHERE tx.dir = 1), 0)::DOUBLE AS inflow,
       coalesce(sum(tx.usd) FILTER (WHERE tx.dir = -1), 0)::DOUBLE AS outflow,
       count(tx.block_time) FILTER (WHERE NOT (tx.self AND tx.dir = -1)) AS tx_count,
       any_value(life.tokens_traded), any_value(life.first_seen), any_value(life.last_active)
FROM w
CROSS JOIN life
LEFT JOIN tx ON w.since IS NULL OR tx.block_time > w.since
GROUP BY w.name, w.ord
ORDER BY w.ord;
