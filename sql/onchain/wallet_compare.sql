-- OnchainWalletCompare finds what two wallets share on one chain over a rolling window:
-- counterparties both dealt with (kind 'c'), tokens both moved (kind 't'), and their
-- direct transfers (kind 'd', one row). Shared lists rank by the two wallets' volume
-- together (ties on address). USD at transfer time, both directions. Reads the two
-- wallets' legs; self-transfers are left out.
-- $1 chain, $2 wallet a, $3 wallet b, $4 since (epoch us, exclusive), $5 until
-- (epoch us, inclusive), $6 rows per list, $7 and $8 the wallet segments' split dates,
-- $9 and $10 wallet a's and wallet b's segment files, $11 the per-date legs files after
-- $8 (Queries.walletArgs).
-- Two reads of wallet_legs (each its wallet's bucket) rather than one of both wallets.
WITH sides AS (
    SELECT wallet AS w, cp AS other, token AS token_address, usd, dir
    FROM wallet_legs($2, $1, $7, $8, $9, $11)
    WHERE NOT self
      AND block_time > make_timestamp($4) AND block_time <= make_timestamp($5)
    UNION ALL
    SELECT wallet, cp, token, usd, dir
    FROM wallet_legs($3, $1, $7, $8, $10, $11)
    WHERE $3 <> $2 AND NOT self
      AND block_time > make_timestamp($4) AND block_time <= make_timestamp($5)
),
cp AS (
    SELECT other AS key,
           coalesce(sum(usd) FILTER (WHERE w = $2), 0) AS a_usd, coalesce(sum(usd) FILTER (WHERE w = $3), 0) AS b_usd,
           count(*) FILTER (WHERE w = $2) AS a_n, count(*) FILTER (WHERE w = $3) AS b_n
    FROM sides WHERE other NOT IN ($2, $3)
    GROUP BY other HAVING a_n > 0 AND b_n > 0
    ORDER BY a_usd + b_usd DESC, key LIMIT $6
),
tk AS (
    SELECT token_address AS key,
           coalesce(sum(usd) FILTER (WHERE w = $2), 0) AS a_usd, coalesce(sum(usd) FILTER (WHERE w = $3), 0) AS b_usd,
           count(*) FILTER (WHERE w = $2) AS a_n, count(*) FILTER (WHERE w = $3) AS b_n
    FROM sides
    GROUP BY token_address HAVING a_n > 0 AND b_n > 0
    ORDER BY a_usd + b_usd DESC, key LIMIT $6
),
d AS (
    -- a's legs against b: dir -1 is a to b, dir 1 is b to a.
    SELECT 'd' AS kind, '' AS key,
           coalesce(sum(usd) FILTER (WHERE dir = -1), 0) AS a_usd,
           coalesce(sum(usd) FILTER (WHERE dir = 1), 0) AS b_usd,
           count(*) AS a_n, 0 AS b_n
    FROM sides WHERE w = $2 AND other = $3
)
-- Each list in its rank order (exact DECIMAL sums), so the caller keeps the order.
SELECT kind, key, a_usd::DOUBLE, b_usd::DOUBLE, a_n, b_n FROM (
    SELECT 'c' AS kind, key, a_usd, b_usd, a_n, b_n FROM cp
    UNION ALL
    SELECT 't', key, a_usd, b_usd, a_n, b_n FROM tk
    UNION ALL
    SELECT kind, key, a_usd, b_usd, a_n, b_n FROM d
)
ORDER BY kind, a_usd + b_usd DESC, key;
