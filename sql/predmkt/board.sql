-- PredmktBuildBoard aggregates every (category, wallet) of the hourly board, unrounded.
-- $1 the board's clock in epoch ms (the start of its hour); windows are [$1 - width, $1],
-- and lifetime figures count only fills and resolutions at or before $1 (no lookahead
-- when the store clock is in the past of the lake).
-- $2 the predmkt_wallet_days partitions of the trades dates wholly at or before $1 and
-- each wholly inside or outside every window (with, for the dates up to one wholly
-- before every window, the one predmkt_wallet_totals file of their sums instead: same
-- columns, and its rows fall outside every window as each day's would), $3 the
-- predmkt_trades partitions of the other dates that hold a fill at or before $1 (the
-- one or few days the clock and the windows' starts cut, and any day not yet
-- published), both separated by chr(31) and never empty (query/file_lists.go): the
-- planner (predmktBoardPlan in query/predmkt_board.go) puts each date in at most one
-- of them. $4 <= wallet < $5:
-- the pass's wallets (query/predmkt_board.go predmktBoardPasses; '' leaves that side
-- open): every figure is per wallet, so the passes' rows together are the board.
-- A wallet's PnL on a validly resolved market is its cash flow (sells minus buys)
-- plus its net shares of the winning outcome at 1 USD each (losing shares pay 0).
-- An invalid resolution settles nothing: the market adds no PnL and no resolved count.
-- Money and shares are summed as integer micro-units so every figure is exact and
-- independent of summation order (the cent rounding then never depends on it), which
-- is also why a sum of per-day sums equals the sum over the days' fills.
WITH f AS (
    SELECT t.wallet, t.condition_id, t.outcome_index, t.side, t.ts,
           CAST(round(t.usd * 1e6) AS BIGINT)  AS usd,
           CAST(round(t.size * 1e6) AS BIGINT) AS size
    FROM read_parquet(string_split($3, chr(31)), hive_partitioning = false) t
    WHERE t.ts <= $1 AND ($4 = '' OR t.wallet >= $4) AND ($5 = '' OR t.wallet < $5)
), d AS (
    -- The whole days: a day is inside a window exactly when its first fill is (it lies
    -- wholly on one side of the window's start), and wholly at or before $1.
    SELECT wallet, condition_id, vol, n, cash, net0, net1,
           CASE WHEN first_ts >= $1 - 86400000 THEN vol ELSE 0 END   AS vol_24h,
           CASE WHEN first_ts >= $1 - 604800000 THEN vol ELSE 0 END  AS vol_7d,
           CASE WHEN first_ts >= $1 - 2592000000 THEN vol ELSE 0 END AS vol_30d,
           CASE WHEN first_ts >= $1 - 86400000 THEN n ELSE 0 END     AS n_24h,
           CASE WHEN first_ts >= $1 - 604800000 THEN n ELSE 0 END    AS n_7d,
           CASE WHEN first_ts >= $1 - 2592000000 THEN n ELSE 0 END   AS n_30d,
           first_ts, last_ts
    FROM read_parquet(string_split($2, chr(31)), hive_partitioning = false)
    WHERE ($4 = '' OR wallet >= $4) AND ($5 = '' OR wallet < $5)
    UNION ALL
    -- The cut days, raw: a day's sums are BIGINT, as in predmkt_wallet_days (a cast
    -- that overflowed would fail the board, never change it).
    SELECT t.wallet, t.condition_id,
           CAST(sum(t.usd) AS BIGINT), count(*),
           CAST(sum(CASE WHEN t.side = 'SELL' THEN t.usd ELSE -t.usd END) AS BIGINT),
           CAST(sum(CASE WHEN t.outcome_index = 0 THEN (CASE WHEN t.side = 'BUY' THEN t.size ELSE -t.size END) ELSE 0 END) AS BIGINT),
           CAST(sum(CASE WHEN t.outcome_index = 1 THEN (CASE WHEN t.side = 'BUY' THEN t.size ELSE -t.size END) ELSE 0 END) AS BIGINT),
           CAST(coalesce(sum(t.usd) FILTER (WHERE t.ts BETWEEN $1 - 86400000 AND $1), 0) AS BIGINT),
           CAST(coalesce(sum(t.usd) FILTER (WHERE t.ts BETWEEN $1 - 604800000 AND $1), 0) AS BIGINT),
           CAST(coalesce(sum(t.usd) FILTER (WHERE t.ts BETWEEN $1 - 2592000000 AND $1), 0) AS BIGINT),
           count(*) FILTER (WHERE t.ts BETWEEN $1 - 86400000 AND $1),
           count(*) FILTER (WHERE t.ts BETWEEN $1 - 604800000 AND $1),
           count(*) FILTER (WHERE t.ts BETWEEN $1 - 2592000000 AND $1),
           min(t.ts), max(t.ts)
    FROM f t
    GROUP BY t.wallet, t.condition_id
), p AS (
    SELECT wallet, condition_id,
           sum(vol) AS vol, sum(n) AS n, sum(cash) AS cash, sum(net0) AS net0, sum(net1) AS net1,
           -- 0, not NULL, for a market whose fills all lack a usd, as over raw fills.
           coalesce(sum(vol_24h), 0) AS vol_24h, coalesce(sum(vol_7d), 0) AS vol_7d, coalesce(sum(vol_30d), 0) AS vol_30d,
           sum(n_24h) AS n_24h, sum(n_7d) AS n_7d, sum(n_30d) AS n_30d,
           min(first_ts) AS first_ts, max(last_ts) AS last_ts
    FROM d
    GROUP BY wallet, condition_id
), mk AS (
    -- A fill counts once per row of its market (the join over raw fills did the same),
    -- so the sums are multiplied by the market's row count.
    SELECT condition_id, any_value(category) AS category, count(*) AS k
    FROM predmkt_markets
    GROUP BY condition_id
), wm AS (
    SELECT p.wallet, p.condition_id, mk.category,
           CAST(p.vol * mk.k AS BIGINT) AS vol, p.n * mk.k AS n, p.cash * mk.k AS cash,
           p.net0 * mk.k AS net0, p.net1 * mk.k AS net1,
           p.vol_24h * mk.k AS vol_24h, p.vol_7d * mk.k AS vol_7d, p.vol_30d * mk.k AS vol_30d,
           p.n_24h * mk.k AS n_24h, p.n_7d * mk.k AS n_7d, p.n_30d * mk.k AS n_30d,
           p.first_ts, p.last_ts
    FROM p
    JOIN mk ON mk.condition_id = p.condition_id
), pm AS (
    SELECT wm.*,
           (r.condition_id IS NOT NULL AND NOT r.invalid AND r.winning_index IS NOT NULL) AS settled,
           epoch_ms(r.resolved_ts) AS res_ms,
           CASE WHEN r.condition_id IS NOT NULL AND NOT r.invalid AND r.winning_index IS NOT NULL
                THEN cash + CASE WHEN r.winning_index = 0 THEN net0 ELSE net1 END END AS pnl
    FROM wm LEFT JOIN (SELECT * FROM predmkt_resolutions WHERE epoch_ms(resolved_ts) <= $1) r ON r.condition_id = wm.condition_id
), wc AS (
    -- Per category and wallet first (one group per pair's category), then every
    -- category's groups of a wallet summed again for "all": the same sums, counts, minima
    -- and maxima as grouping the pairs twice, over a few rows per wallet instead of a
    -- second copy of every pair.
    SELECT category AS cat, wallet,
           sum(pnl)                                                                   AS pnl,
           sum(pnl) FILTER (WHERE res_ms BETWEEN $1 - 86400000 AND $1)                AS pnl_24h,
           sum(pnl) FILTER (WHERE res_ms BETWEEN $1 - 604800000 AND $1)               AS pnl_7d,
           sum(pnl) FILTER (WHERE res_ms BETWEEN $1 - 2592000000 AND $1)              AS pnl_30d,
           count(*) FILTER (WHERE settled)                                            AS resolved,
           sum(vol) FILTER (WHERE settled)                                            AS res_vol,
           -- "made money": the market's PnL is at least half a cent (5000 micro-USD).
           sum(vol) FILTER (WHERE settled AND pnl >= 5000)                            AS win_vol,
           sum(vol) AS vol, sum(vol_24h) AS vol_24h, sum(vol_7d) AS vol_7d, sum(vol_30d) AS vol_30d,
           sum(n) AS n, sum(n_24h) AS n_24h, sum(n_7d) AS n_7d, sum(n_30d) AS n_30d,
           count(*)                                                                   AS markets,
           min(first_ts) AS first_ts, max(last_ts) AS last_ts
    FROM pm
    GROUP BY category, wallet
), cats AS (
    SELECT 'all' AS cat, wallet, sum(pnl) AS pnl, sum(pnl_24h) AS pnl_24h, sum(pnl_7d) AS pnl_7d, sum(pnl_30d) AS pnl_30d,
           sum(resolved) AS resolved, sum(res_vol) AS res_vol, sum(win_vol) AS win_vol,
           sum(vol) AS vol, sum(vol_24h) AS vol_24h, sum(vol_7d) AS vol_7d, sum(vol_30d) AS vol_30d,
           sum(n) AS n, sum(n_24h) AS n_24h, sum(n_7d) AS n_7d, sum(n_30d) AS n_30d,
           sum(markets) AS markets, min(first_ts) AS first_ts, max(last_ts) AS last_ts
    FROM wc
    GROUP BY wallet
    UNION ALL
    SELECT * FROM wc
), pr AS (
    -- A wallet listed k times in the profiles multiplied its rows by k in the join the
    -- board made over every pair; the counts and sums are multiplied by k to match.
    SELECT wallet, any_value(pseudonym) AS pseudonym, any_value(display_name) AS display_name, count(*) AS k
    FROM predmkt_profiles
    WHERE ($4 = '' OR wallet >= $4) AND ($5 = '' OR wallet < $5)
    GROUP BY wallet
)
-- Grouped once more so that a category literally named 'all' adds into the "all" row, as
-- the single grouping did.
SELECT c.cat, c.wallet,
       coalesce(any_value(p.pseudonym), '')                                      AS pseudonym,
       coalesce(any_value(p.display_name), '')                                   AS display_name,
       CAST(coalesce(sum(c.pnl * coalesce(p.k, 1)), 0) AS BIGINT)                AS pnl,
       CAST(coalesce(sum(c.pnl_24h * coalesce(p.k, 1)), 0) AS BIGINT)            AS pnl_24h,
       CAST(coalesce(sum(c.pnl_7d * coalesce(p.k, 1)), 0) AS BIGINT)             AS pnl_7d,
       CAST(coalesce(sum(c.pnl_30d * coalesce(p.k, 1)), 0) AS BIGINT)            AS pnl_30d,
       CAST(sum(c.resolved * coalesce(p.k, 1)) AS BIGINT)                        AS resolved,
       CAST(coalesce(sum(c.res_vol * coalesce(p.k, 1)), 0) AS BIGINT)            AS res_vol,
       CAST(coalesce(sum(c.win_vol * coalesce(p.k, 1)), 0) AS BIGINT)            AS win_vol,
       CAST(sum(c.vol * coalesce(p.k, 1)) AS BIGINT), CAST(sum(c.vol_24h * coalesce(p.k, 1)) AS BIGINT),
       CAST(sum(c.vol_7d * coalesce(p.k, 1)) AS BIGINT), CAST(sum(c.vol_30d * coalesce(p.k, 1)) AS BIGINT),
       CAST(sum(c.n * coalesce(p.k, 1)) AS BIGINT), CAST(sum(c.n_24h * coalesce(p.k, 1)) AS BIGINT),
       CAST(sum(c.n_7d * coalesce(p.k, 1)) AS BIGINT), CAST(sum(c.n_30d * coalesce(p.k, 1)) AS BIGINT),
       CAST(sum(c.markets * coalesce(p.k, 1)) AS BIGINT)                         AS markets,
       min(c.first_ts), max(c.last_ts)
FROM cats c
LEFT JOIN pr p ON p.wallet = c.wallet
GROUP BY c.cat, c.wallet;
