-- OnchainTokenTransfers, one chain: the four hourly transfers boards (periods 1h, 24h,
-- 7d, 30d) of token_transfers_board.sql in one pass, computed into a
-- temporary table from which each published board is cut
-- (token_transfers_board_cut.sql). token_transfers_board.sql read the legs once per
-- period over nested windows; here the 30d window is read once.
-- Exactness: each leg of the 30d window falls in one band (0: after $2, 1: after $3,
-- 2: after $4, 3: after $5) and period k holds the bands <= k; the per-(token, wallet)
-- figures are sums of the bands' exact DECIMAL sums, then ranked as in
-- token_transfers_board.sql.
-- History from the wallet bands, as discover_all.sql reads it: on a board hour of the
-- serving date D of the published onchain_wallet_bands, the whole days of the 30d
-- window up to the version's newest legs date R come summed per (wallet, token, band) from them
-- (their bands 2 and 3, the 7d and 30d windows' whole days, are this query's), the
-- legs of the edge days up to R from onchain_wallet_edges and those dated after R
-- from onchain_legs_by_token. Without them the bands and edges are empty files and R
-- is 0001-01-01: every leg of the window from onchain_legs_by_token.
-- $1 chain, $2..$5 since of 1h, 24h, 7d, 30d (epoch us, exclusive), $6 until (epoch us,
-- inclusive), $7 rows per token and tab, $8 R, $9 the chain's onchain_wallet_edges
-- files, $10 its onchain_wallet_bands files.
WITH legs AS (
    SELECT token, wallet, block_time, dir, amount, usd
    FROM read_parquet($9, hive_partitioning = false)
    WHERE block_time > make_timestamp($5) AND block_time <= make_timestamp($6)
    UNION ALL
    SELECT token, wallet, block_time, dir, amount, usd
    FROM onchain_legs_by_token
    WHERE chain = $1 AND date > CAST($8 AS DATE) AND block_time > make_timestamp($5) AND block_time <= make_timestamp($6)
),
banded AS (
    SELECT token, wallet AS address, band,
           amount_in AS bought, amount_out AS sold, inflow AS usd_spent, outflow AS usd_received
    FROM read_parquet($10, hive_partitioning = false)
    WHERE band <= 3
      AND wallet <> '0x0000000000000000000000000000000000000000'
      AND token <> '0x0000000000000000000000000000000000000000'
    UNION ALL
    SELECT l.token, l.wallet AS address,
           CASE WHEN l.block_time > make_timestamp($2) THEN 0
                WHEN l.block_time > make_timestamp($3) THEN 1
                WHEN l.block_time > make_timestamp($4) THEN 2
                ELSE 3 END AS band,
           sum(l.amount) FILTER (WHERE l.dir = 1) AS bought,
           sum(l.amount) FILTER (WHERE l.dir = -1) AS sold,
           sum(l.usd) FILTER (WHERE l.dir = 1) AS usd_spent,
           sum(l.usd) FILTER (WHERE l.dir = -1) AS usd_received
    FROM legs l
    WHERE l.wallet <> '0x0000000000000000000000000000000000000000'
      AND l.token <> '0x0000000000000000000000000000000000000000'
    GROUP BY ALL
),
boards AS (
    SELECT * FROM (VALUES ('1h', 0), ('24h', 1), ('7d', 2), ('30d', 3)) w(period, k)
),
agg AS (
    SELECT p.period, x.token, x.address,
           coalesce(sum(x.bought), 0) AS bought,
           coalesce(sum(x.sold), 0) AS sold,
           coalesce(sum(x.usd_spent), 0) AS usd_spent,
           coalesce(sum(x.usd_received), 0) AS usd_received
    FROM banded x JOIN boards p ON x.band <= p.k
    GROUP BY p.period, x.token, x.address
),
tabs AS (
    SELECT 'bought' AS tab, unnest(x, recursive := true)
    FROM (SELECT arg_min(agg, (-bought, address), $7) AS x FROM agg WHERE bought > 0 GROUP BY period, token)
    UNION ALL
    SELECT 'sold', unnest(x, recursive := true)
    FROM (SELECT arg_min(agg, (-sold, address), $7) AS x FROM agg WHERE sold > 0 GROUP BY period, token)
)
SELECT $1 || '.' || t.period AS board, t.token, t.tab, t.address,
       t.bought, t.sold, t.usd_spent, t.usd_received,
       lab.entity
FROM tabs t LEFT JOIN onchain_labels_at(make_timestamp($6)) lab USING (address); -- labels observed by then
