-- PerpdexWalletCarry: the perpdex_wallet_carry partition of date $2, the carry of the
-- previous date that has one ($1, '' for none) with date $2's rows of the per-day tables
-- folded in, per wallet (query/perpdex_carry.go). Folding is exact: the last snapshot is
-- the latest by time, the first value that of the earliest day (a day's first value is
-- the smallest of its running peaks, as a running peak starts at the first value and
-- never falls), the sums exact decimals, the counts and extremes counts and extremes.
-- The drawdown folds as sql/perpdex/board.sql's over a window's days: each segment's
-- running peak is the larger of its own and the peak carried from the days before (the
-- previous carry's, then the date's earlier days'), its drawdown is taken at its lowest
-- value, and the carry keeps the largest and the peak so far. A partition's date is its
-- rows' day, as sql/perpdex/board.sql relies on.
WITH prev AS (
    SELECT * EXCLUDE (date) FROM perpdex_wallet_carry WHERE date = TRY_CAST($1 AS DATE)
), seg AS (
    SELECT wallet, day, peak, low, last_ts, last_av FROM perpdex_accounts_daily WHERE date = CAST($2 AS DATE)
), days AS (
    SELECT wallet, day, max(peak) AS day_peak, any_value(last_ts) AS last_ts, any_value(last_av) AS last_av,
           min(peak) AS first_av
    FROM seg GROUP BY wallet, day
), before AS (
    -- the peak carried into each day: the previous carry's and the date's earlier days'
    SELECT d.wallet, d.day,
           CASE WHEN p.peak IS NULL THEN w.within WHEN w.within IS NULL THEN p.peak ELSE greatest(p.peak, w.within) END AS before_peak
    FROM days d
    JOIN (SELECT wallet, day,
                 max(day_peak) OVER (PARTITION BY wallet ORDER BY day ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS within
          FROM days) w USING (wallet, day)
    LEFT JOIN prev p USING (wallet)
), dd AS (
    SELECT s.wallet,
           max(CASE WHEN greatest(coalesce(b.before_peak, s.peak), s.peak) > 0
                    THEN (greatest(coalesce(b.before_peak, s.peak), s.peak) - s.low) / greatest(coalesce(b.before_peak, s.peak), s.peak) * 100
                    ELSE 0 END) AS dd_pct,
           max(greatest(coalesce(b.before_peak, s.peak), s.peak) - s.low) AS dd_usd
    FROM seg s JOIN before b USING (wallet, day)
    GROUP BY s.wallet
), u AS (
    SELECT wallet, last_ts, last_av, first_ts, first_av, realized_x, fee_x, volume_x, fill_days, last_fill_day,
           funding_x, lev_x, lev_n, peak, dd_pct, dd_usd
    FROM prev
    UNION ALL
    SELECT wallet, last_ts, last_av, CAST(day AS TIMESTAMP), first_av, NULL, NULL, NULL, NULL, NULL,
           NULL, NULL, NULL, day_peak, NULL, NULL
    FROM days
    UNION ALL
    SELECT wallet, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, dd_pct, dd_usd
    FROM dd
    UNION ALL
    SELECT wallet, NULL, NULL, NULL, NULL, realized_x, fee_x, volume_x, 1, day, NULL, NULL, NULL, NULL, NULL, NULL
    FROM perpdex_fills_daily WHERE date = CAST($2 AS DATE)
    UNION ALL
    SELECT wallet, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, usdc_x, NULL, NULL, NULL, NULL, NULL
    FROM perpdex_funding_daily WHERE date = CAST($2 AS DATE)
    UNION ALL
    SELECT wallet, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, leverage_x, leverage_n, NULL, NULL, NULL
    FROM perpdex_positions_daily WHERE date = CAST($2 AS DATE)
)
SELECT wallet,
       max(last_ts)                                                        AS last_ts,
       arg_max(last_av, last_ts) FILTER (WHERE last_ts IS NOT NULL)       AS last_av,
       min(first_ts)                                                       AS first_ts,
       arg_min(first_av, first_ts) FILTER (WHERE first_ts IS NOT NULL)    AS first_av,
       sum(realized_x)                                                     AS realized_x,
       sum(fee_x)                                                          AS fee_x,
       sum(volume_x)                                                       AS volume_x,
       CAST(sum(fill_days) AS BIGINT)                                      AS fill_days,
       max(last_fill_day)                                                  AS last_fill_day,
       sum(funding_x)                                                      AS funding_x,
       sum(lev_x)                                                          AS lev_x,
       CAST(sum(lev_n) AS BIGINT)                                          AS lev_n,
       max(peak)                                                           AS peak,
       max(dd_pct)                                                         AS dd_pct,
       max(dd_usd)                                                         AS dd_usd
FROM u
GROUP BY wallet
