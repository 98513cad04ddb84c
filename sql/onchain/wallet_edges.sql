-- OnchainWallet when the lake's onchain_wallet_edges (and onchain_wallet_bands, same
-- version) are those of the request's split and its clock falls on their serving date:
-- wallet.sql, which defines the figures, with its reads of the wallet's segments made
-- two reads of small files. The whole days come already summed per window band
-- (onchain_wallet_bands: on any clock of the serving date a whole day lies in one band),
-- and the legs of the days a window starts in and of the serving date up to the split
-- from onchain_wallet_edges, once; the dates after the split are read as in wallet.sql.
-- $1 address, $2 until (epoch us, inclusive, on the serving date), $3 the version's R,
-- $4 the wallet's bucket's onchain_wallet_edges files, $5 its onchain_wallet_bands files,
-- $6 the per-date legs files after $3 (Queries.walletArgs, walletEdgeFiles).
WITH x AS (
    SELECT chain, token, band, inflow AS i, outflow AS o, tx_count AS n, first_time, last_time
    FROM read_parquet($5, hive_partitioning = true, hive_types = {'built': VARCHAR, 'chain': VARCHAR, 'bucket': VARCHAR})
    WHERE wallet = $1
    UNION ALL
    -- the legs of the edge days and of the dates after the split, up to now, in the band
    -- of the narrowest window holding them
    SELECT chain, token,
           CASE WHEN block_time > make_timestamp($2) - INTERVAL 1 DAY THEN 1
                WHEN block_time > make_timestamp($2) - INTERVAL 7 DAY THEN 2
                WHEN block_time > make_timestamp($2) - INTERVAL 30 DAY THEN 3
                WHEN block_time > make_timestamp($2) - INTERVAL 90 DAY THEN 4
                ELSE 5 END,
           CASE WHEN dir = 1 THEN usd END, CASE WHEN dir = -1 THEN usd END,
           CASE WHEN NOT (self AND dir = -1) THEN 1 ELSE 0 END, block_time, block_time
    FROM (
        SELECT chain, wallet, cp, token, block_time, dir, amount, usd, priced, self, tx_hash, log_index, block_number
        FROM read_parquet($4, hive_partitioning = true, hive_types = {'built': VARCHAR, 'chain': VARCHAR, 'bucket': VARCHAR})
        WHERE wallet = $1 AND block_time <= make_timestamp($2)
        UNION ALL
        SELECT * FROM wallet_today_legs($1, '', $3, $6)
        WHERE block_time <= make_timestamp($2)
    )
),
-- The windows from the bands' sums (exact DECIMAL sums: window k sums the bands up to k),
-- with the all-time figures beside them. Five rows of windows joined to at most five
-- band rows rather than one aggregate of fifteen filtered sums over every (chain,
-- token, band) group: the same figures in about three quarters of the time (a wallet's
-- summary costs DuckDB's fixed work per expression and per read more than its rows).
-- x is read once: DuckDB materialises a CTE that two others read.
b AS (
    SELECT band, sum(i) AS i, sum(o) AS o, sum(n) AS n
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
