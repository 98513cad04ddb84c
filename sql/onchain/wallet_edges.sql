-- OnchainWallet when the lake's onchain_wallet_edges (and onchain_wallet_bands, same
-- version) are those of the request's split and its clock falls on their serving date:
-- wallet.sql, which defines the figures, with its reads of the wallet's segments made
-- two reads of small files. The whole days come already summed per window band
-- (onchain_wallet_bands: on any clock of the serving date a whole day lies in one band),
-- and the legs of the days a window starts in and of the serving date up to the split
-- from onchain_wallet_edges, once; the dates after the split are read as in wallet.sql.
-- $1 address, $2 until (epoch us, inclusive, on the serving date), $3 the recent split,
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
g AS (
    SELECT chain, token, band,
           sum(i) AS i, sum(o) AS o, sum(n) AS n,
           min(first_time) AS first_seen, max(last_time) AS last_active
    FROM x
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
