-- OnchainScreener, every board of one chain at one board hour in one pass: the eight
-- boards (windows 24h, 7d, 30d, 90d, each with and without smart_money_only) of
-- screener.sql, computed into a temporary table from which
-- each published board is cut (screener_cut.sql). screener.sql scanned the legs once per board, eight times
-- over overlapping windows; here the 90d window is read once.
-- Exactness: the windows are nested (a window's first date is before the next
-- shorter one's), so each sending leg falls in one band (0: from the 24h window's
-- first date, 1: from the 7d one's, 2: from the 30d one's, 3: from the 90d one's) and
-- window k holds the bands <= k. The legs are summed per (token, band), with and
-- without smart_money_only (whose scope, transfers touching the cohort, is a filter
-- and whose flows in and out of the cohort are the smart_net terms), so every figure
-- of screener.sql is a sum over bands of those exact DECIMAL sums. A token's holders in
-- window k are the addresses whose first band with the token is <= k (count DISTINCT is
-- not additive over bands; the least band is). Tokens with no transfer in a window
-- (none in scope with smart_money_only) have no row there, as in screener.sql.
-- The holders come from the wallet bands, as discover_all.sql reads history: every
-- transfer gives each side a leg, so a token's addresses in a band are the wallets with
-- a leg of it there, and on a board hour of the serving date D of the published
-- onchain_wallet_bands each whole day of the 90d window up to the version's R lies
-- in one band of this query (the days' bands 2, 3, 4 are its 1, 2, 3: the windows
-- start at midnight, on the days the bands leave to onchain_wallet_edges). The edge
-- days' legs up to R come from onchain_wallet_edges, those after R from onchain_legs.
-- Without them the bands and edges are empty files and R is 0001-01-01: every leg.
-- $1 chain, $2..$5 the first dates (YYYY-MM-DD, inclusive) of 24h, 7d, 30d, 90d, $6
-- until (epoch us, inclusive), $7 cohort PnL floor (USD), $8 R, $9 the chain's
-- onchain_wallet_edges files, $10 its onchain_wallet_bands files.
WITH venues AS (
    SELECT address FROM onchain_labels_at(make_timestamp($6)) WHERE venue -- labels observed by then
),
cohort AS (
    -- Materialised once per (chain, board hour) by smart_cohort.sql; $7 is unused here.
    SELECT address FROM onchain_cohort_mem WHERE chain = $1 AND until_us = $6 AND $7 IS NOT NULL
),
tx AS (
    SELECT l.token AS token_address, l.wallet AS from_address, l.cp AS to_address, l.usd,
           CASE WHEN l.block_time >= CAST(CAST($2 AS DATE) AS TIMESTAMP) THEN 0
                WHEN l.block_time >= CAST(CAST($3 AS DATE) AS TIMESTAMP) THEN 1
                WHEN l.block_time >= CAST(CAST($4 AS DATE) AS TIMESTAMP) THEN 2
                ELSE 3 END AS band,
           l.wallet NOT IN (SELECT address FROM venues) AS f_wallet,
           l.cp NOT IN (SELECT address FROM venues) AS t_wallet,
           l.wallet IN (SELECT address FROM cohort) AS f_smart,
           l.cp IN (SELECT address FROM cohort) AS t_smart
    -- The sending legs are the transfers themselves (legs_publish.sql): read from
    -- onchain_transfers, one row per transfer in files sorted by time, instead of every
    -- leg of the window's files (sorted by wallet, both sides) filtered to one side.
    FROM (SELECT token_address AS token, from_address AS wallet, to_address AS cp, block_time,
                 CAST(coalesce(usd, 0) AS DECIMAL(38, 6)) AS usd
          FROM onchain_transfers WHERE chain = $1) l
    WHERE l.block_time >= CAST(CAST($5 AS DATE) AS TIMESTAMP) AND l.block_time <= make_timestamp($6)
),
bands AS (
    -- Per (token, band): every transfer (P = non-venue wallets), and those touching the
    -- cohort (P = the cohort). Flows into and out of the cohort are the same sums in both.
    SELECT token_address, band,
           sum(usd) AS vol, count(*) AS n,
           sum(usd) FILTER (WHERE t_wallet AND NOT f_wallet) AS w_in,
           sum(usd) FILTER (WHERE f_wallet AND NOT t_wallet) AS w_out,
           sum(usd) FILTER (WHERE f_smart OR t_smart) AS s_vol,
           count(*) FILTER (WHERE f_smart OR t_smart) AS s_n,
           sum(usd) FILTER (WHERE t_smart AND NOT f_smart) AS s_in,
           sum(usd) FILTER (WHERE f_smart AND NOT t_smart) AS s_out
    FROM tx
    GROUP BY token_address, band
),
boards AS (
    SELECT * FROM (VALUES ('24h', 0), ('7d', 1), ('30d', 2), ('90d', 3)) w(win, k),
                  (VALUES (false), (true)) s(smart)
),
agg AS (
    SELECT b.win, b.smart, token_address,
           sum(CASE WHEN b.smart THEN s_vol ELSE vol END) AS volume_usd,
           coalesce(sum(CASE WHEN b.smart THEN s_in ELSE w_in END), 0) AS in_usd,
           coalesce(sum(CASE WHEN b.smart THEN s_out ELSE w_out END), 0) AS out_usd,
           coalesce(sum(s_in), 0) - coalesce(sum(s_out), 0) AS smart_net,
           sum(CASE WHEN b.smart THEN s_n ELSE n END) AS tx_count
    FROM bands JOIN boards b ON bands.band <= b.k
    GROUP BY b.win, b.smart, token_address
    HAVING sum(CASE WHEN b.smart THEN s_n ELSE n END) > 0
),
legs AS (
    SELECT token, wallet, block_time
    FROM read_parquet($9, hive_partitioning = false)
    WHERE block_time >= CAST(CAST($5 AS DATE) AS TIMESTAMP) AND block_time <= make_timestamp($6)
    UNION ALL
    SELECT token, wallet, block_time
    FROM onchain_legs
    WHERE chain = $1 AND date > CAST($8 AS DATE)
      AND block_time >= CAST(CAST($5 AS DATE) AS TIMESTAMP) AND block_time <= make_timestamp($6)
),
addrs AS (
    -- Each (token, address) once, with its least band and whether it is in the cohort.
    SELECT token_address, a, min(band) AS band, a IN (SELECT address FROM cohort) AS smart
    FROM (
        SELECT token AS token_address, wallet AS a, band - 1 AS band
        FROM read_parquet($10, hive_partitioning = false)
        WHERE band <= 4
        UNION ALL
        SELECT token, wallet,
               CASE WHEN block_time >= CAST(CAST($2 AS DATE) AS TIMESTAMP) THEN 0
                    WHEN block_time >= CAST(CAST($3 AS DATE) AS TIMESTAMP) THEN 1
                    WHEN block_time >= CAST(CAST($4 AS DATE) AS TIMESTAMP) THEN 2
                    ELSE 3 END
        FROM legs
    )
    WHERE a <> '0x0000000000000000000000000000000000000000'
    GROUP BY token_address, a
),
holders AS (
    SELECT b.win, b.smart, token_address, count(*) AS n
    FROM addrs JOIN boards b ON addrs.band <= b.k
    WHERE NOT b.smart OR addrs.smart
    GROUP BY b.win, b.smart, token_address
)
SELECT $1 || '.' || a.win || '.' || CAST(a.smart AS VARCHAR) AS board,
       a.token_address, coalesce(k.symbol, '') AS symbol, k.name,
       a.volume_usd::DOUBLE AS volume_usd, a.in_usd::DOUBLE AS in_usd, a.out_usd::DOUBLE AS out_usd,
       coalesce(h.n, 0) AS unique_holders, a.tx_count::BIGINT AS tx_count,
       round(a.volume_usd, 2)::DOUBLE AS vol_key, (round(a.in_usd, 2) - round(a.out_usd, 2))::DOUBLE AS net_key,
       round(a.smart_net, 2)::DOUBLE AS smart_key
FROM agg a
LEFT JOIN holders h USING (win, smart, token_address)
LEFT JOIN onchain_tokens k ON k.chain = $1 AND k.token_address = a.token_address;
