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
-- A token's PnL is not additive over bands, so each token's window-k figures are its
-- running sums over its bands up to k (one window sort per (wallet, token)), and each
-- band row carries what it changes in its wallet's figures (the token's PnL before and
-- after it, whether it has one, whether it is profitable, whether it is new): a
-- wallet's window-k figures are the sums of those changes over the bands <= k, exact
-- as the sums are DECIMAL and the counts integers. Joining every (wallet, token, band)
-- to each window it belongs to and grouping by (window, wallet, token) gave the same
-- rows for about a third more CPU in the store's pass at large (7.6 million joined
-- rows per chain).
-- History from the wallet bands: on a board hour of the serving date D of the published
-- onchain_wallet_bands (Queries.ocBandsFor), the whole days up to R (the version's newest legs date)
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
fb AS (
    -- The bands file's rows: one per (wallet, token, band).
    SELECT wallet AS w, token, band - 1 AS band,
           amount_in AS b, inflow AS bu, amount_out AS s, outflow AS su, priced, tx_count AS n,
           first_time AS first_seen, last_time AS last_active
    FROM read_parquet($9, hive_partitioning = false)
),
eb AS (
    -- The edge legs summed per (wallet, token, band).
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
banded AS (
    SELECT * FROM fb
    UNION ALL
    SELECT * FROM eb
),
bb AS (
    -- One row per (wallet, token, band): a band's whole days (the bands file) and its
    -- edge legs may both hold it. Both sides are one row per key already, so a join
    -- adds the few the edges hold to the many of the file (grouping the union of both
    -- cost 5.8 s of a 16 cpu-s pass on ethereum at large); a sum of none is NULL and
    -- bool_and skips a NULL, as in a grouping.
    SELECT coalesce(f.w, e.w) AS w, coalesce(f.token, e.token) AS token, coalesce(f.band, e.band) AS band,
           CASE WHEN f.b IS NULL THEN e.b WHEN e.b IS NULL THEN f.b ELSE f.b + e.b END AS b,
           CASE WHEN f.bu IS NULL THEN e.bu WHEN e.bu IS NULL THEN f.bu ELSE f.bu + e.bu END AS bu,
           CASE WHEN f.s IS NULL THEN e.s WHEN e.s IS NULL THEN f.s ELSE f.s + e.s END AS s,
           CASE WHEN f.su IS NULL THEN e.su WHEN e.su IS NULL THEN f.su ELSE f.su + e.su END AS su,
           CASE WHEN f.priced IS NULL THEN e.priced WHEN e.priced IS NULL THEN f.priced ELSE f.priced AND e.priced END AS priced,
           coalesce(f.n, 0) + coalesce(e.n, 0) AS n
    FROM (SELECT * FROM fb WHERE band <= 4) f
    FULL JOIN (SELECT * FROM eb WHERE band <= 4) e ON e.w = f.w AND e.token = f.token AND e.band = f.band
),
cum AS (
    -- Each token's figures at the windows its bands open: as band k holds the legs of
    -- window k not in window k - 1, the running sums over a token's bands up to band k
    -- are its window-k sums (c*). Up to the band before (p*) they are the running sums
    -- less the band's own, exact as DECIMAL; where no band before has a leg of a
    -- direction that gives 0 instead of NULL, and where none is unpriced true instead of
    -- NULL, which pt's condition reads alike (0 > 0 and NULL > 0 are both not true, and
    -- a token with no band before has no sum before). "No band unpriced" is bool_and of
    -- priced because priced is never NULL (legs_publish.sql: usd IS NOT NULL; the bands
    -- and the edge groups take bool_and of it). One frame instead of two: the window was
    -- the pass's largest operator.
    SELECT w, token, band, bu, su, n, cb, cbu, cs, csu, unpriced = 0 AS cp,
           cb - coalesce(b, 0) AS pb, cbu - coalesce(bu, 0) AS pbu, cs - coalesce(s, 0) AS ps, csu - coalesce(su, 0) AS psu,
           unpriced - CAST(coalesce(NOT priced, false) AS BIGINT) = 0 AS pp,
           rn - 1 AS prev
    FROM (SELECT *,
                 sum(b) OVER o AS cb, sum(bu) OVER o AS cbu, sum(s) OVER o AS cs, sum(su) OVER o AS csu,
                 count(*) FILTER (WHERE NOT priced) OVER o AS unpriced,
                 row_number() OVER o AS rn
          FROM bb
          WINDOW o AS (PARTITION BY w, token ORDER BY band ROWS UNBOUNDED PRECEDING))
),
pt AS (
    -- A token's PnL at a window exists when it was bought and sold and is priced; each
    -- row carries what its band changes in the wallet's figures (a token's PnL, whether
    -- it has one, whether it is profitable, whether it is traded), so that a window's
    -- figures are the sums of those changes over its bands: exact, as the sums are
    -- DECIMAL and the counts integers.
    SELECT w, band, bu, su, n, prev = 0 AS first,
           CASE WHEN cb > 0 AND cs > 0 AND cp THEN CAST(least(cb, cs) * (csu / cs - cbu / cb) AS DECIMAL(38, 6)) END AS pnl,
           CASE WHEN pb > 0 AND ps > 0 AND pp THEN CAST(least(pb, ps) * (psu / ps - pbu / pb) AS DECIMAL(38, 6)) END AS ppnl
    FROM cum
),
wb AS (
    SELECT w, band,
           sum(bu) AS bu, sum(su) AS su, sum(n) AS n,
           count(*) FILTER (WHERE first) AS tokens,
           sum(coalesce(pnl, 0) - coalesce(ppnl, 0)) AS pnl,
           sum(CAST(pnl IS NOT NULL AS INTEGER) - CAST(ppnl IS NOT NULL AS INTEGER)) AS priced_tokens,
           sum(CAST(coalesce(pnl > 0, false) AS INTEGER) - CAST(coalesce(ppnl > 0, false) AS INTEGER)) AS profitable
    FROM pt
    GROUP BY w, band
),
boards AS (
    SELECT * FROM (VALUES ('24h', 0), ('7d', 1), ('30d', 2), ('90d', 3), ('all', 4)) w(win, k)
),
wallets AS (
    SELECT b.win, x.w AS address,
           coalesce(sum(x.bu), 0) AS inflow, coalesce(sum(x.su), 0) AS outflow,
           sum(x.tokens)::BIGINT AS tokens_traded,
           sum(x.profitable)::BIGINT AS tokens_profitable,
           sum(x.pnl) AS realized_pnl,
           sum(x.n) AS tx_count
    FROM wb x JOIN boards b ON x.band <= b.k
    GROUP BY b.win, x.w
    HAVING sum(x.priced_tokens) > 0
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
