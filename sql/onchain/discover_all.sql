-- OnchainDiscover, every board of one chain at one board hour in one pass: the five
-- boards (windows 24h, 7d, 30d, 90d, all) of discover.sql, computed into a
-- temporary table from which each published board is cut (discover_cut.sql).
-- discover.sql read the legs once per board for the window and once more for the
-- first and last times (all history up to the board hour), ten scans of history per
-- chain; here history is read once.
-- Exactness: the windows are nested and end at the board hour, so each leg up to it
-- falls in one band (0: after $2, 1: after $3, 2: after $4, 3: after $5, 4: after the
-- epoch (window all), 5: the rest, which only the first and last times read) and
-- window k holds the bands <= k. Per (wallet, token, band) the sums are exact DECIMAL
-- (NULL without a leg of that direction, as sum FILTER in discover.sql), priced is
-- bool_and and the transfer count a count, so the window's figures are their sums,
-- bool_and and sums over its bands: the same numbers discover.sql computes from the
-- legs.
-- History from the wallet bands: on a board hour of the serving date D of the published
-- onchain_wallet_bands (Queries.ocBandsFor), the whole days up to the recent split R
-- that no window starts in come summed per (wallet, token, band) from them (their band
-- 2..5 is this query's 1..4: the same windows, here numbered from 0; the caller makes
-- sure no leg up to R is at or before the epoch, which band 5 would need), the legs of
-- the days a window starts in and of D up to R from onchain_wallet_edges, and the legs
-- dated after R from onchain_legs: every leg up to the board hour once, so the sums are
-- those of the legs. Without them (another day, no published bands), the bands and
-- edges are empty files and R is 0001-01-01: every leg from onchain_legs.
-- $1 chain, $2..$5 since of 24h, 7d, 30d, 90d (epoch us, exclusive), $6 until (epoch
-- us, inclusive), $7 R, $8 the chain's onchain_wallet_edges files, $9 its
-- onchain_wallet_bands files.
WITH legs AS (
    SELECT wallet, token, block_time, dir, amount, usd, priced, self
    FROM read_parquet($8, hive_partitioning = false)
    WHERE block_time <= make_timestamp($6)
    UNION ALL
    SELECT wallet, token, block_time, dir, amount, usd, priced, self
    FROM onchain_legs
    WHERE chain = $1 AND date > CAST($7 AS DATE) AND block_time <= make_timestamp($6)
),
banded AS (
    SELECT wallet AS w, token, band - 1 AS band,
           amount_in AS b, inflow AS bu, amount_out AS s, outflow AS su, priced, tx_count AS n,
           first_time AS first_seen, last_time AS last_active
    FROM read_parquet($9, hive_partitioning = false)
    UNION ALL
    SELECT wallet AS w, token,
           CASE WHEN block_time > make_timestamp($2) THEN 0
                WHEN block_time > make_timestamp($3) THEN 1
                WHEN block_time > make_timestamp($4) THEN 2
                WHEN block_time > make_timestamp($5) THEN 3
                WHEN block_time > make_timestamp(0) THEN 4
                ELSE 5 END AS band,
           sum(amount) FILTER (WHERE dir = 1) AS b, sum(usd) FILTER (WHERE dir = 1) AS bu,
           sum(amount) FILTER (WHERE dir = -1) AS s, sum(usd) FILTER (WHERE dir = -1) AS su,
           bool_and(priced) AS priced,
           -- a self-transfer is one transfer: its sending leg does not count again
           count(*) FILTER (WHERE NOT (self AND dir = -1)) AS n,
           min(block_time) AS first_seen, max(block_time) AS last_active
    FROM legs
    GROUP BY ALL
),
boards AS (
    SELECT * FROM (VALUES ('24h', 0), ('7d', 1), ('30d', 2), ('90d', 3), ('all', 4)) w(win, k)
),
wt AS (
    SELECT b.win, w, token,
           sum(x.b) AS b, sum(bu) AS bu, sum(s) AS s, sum(su) AS su, bool_and(priced) AS priced, sum(n) AS n
    FROM banded x JOIN boards b ON x.band <= b.k
    GROUP BY b.win, w, token
),
pt AS (
    -- A token's PnL exists when it was bought and sold and is priced.
    SELECT *, CASE WHEN b > 0 AND s > 0 AND priced
                   THEN CAST(least(b, s) * (su / s - bu / b) AS DECIMAL(38, 6)) END AS pnl
    FROM wt
),
wallets AS (
    SELECT win, w AS address,
           coalesce(sum(bu), 0) AS inflow, coalesce(sum(su), 0) AS outflow,
           count(*) AS tokens_traded,
           count(*) FILTER (WHERE pnl > 0) AS tokens_profitable,
           sum(pnl) AS realized_pnl,
           sum(n) AS tx_count
    FROM pt GROUP BY win, w
    HAVING count(pnl) > 0
),
seen AS (
    SELECT w AS address, min(first_seen) AS first_seen, max(last_active) AS last_active
    FROM banded
    WHERE w IN (SELECT address FROM wallets)
    GROUP BY w
)
SELECT $1 || '.' || p.win AS board,
       p.address, p.inflow::DOUBLE AS inflow, p.outflow::DOUBLE AS outflow, p.tx_count::BIGINT AS tx_count,
       p.tokens_traded, p.tokens_profitable,
       s.first_seen, s.last_active, p.realized_pnl::DOUBLE AS realized_pnl,
       round(p.inflow, 2)::DOUBLE AS in_key, round(p.outflow, 2)::DOUBLE AS out_key,
       (round(p.inflow, 2) - round(p.outflow, 2))::DOUBLE AS net_key,
       round(p.realized_pnl, 2)::DOUBLE AS pnl_key, (round(p.inflow, 2) + round(p.outflow, 2))::DOUBLE AS vol_key
FROM wallets p JOIN seen s USING (address);
