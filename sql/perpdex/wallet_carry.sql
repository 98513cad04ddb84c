-- PerpdexWalletCarry: the perpdex_wallet_carry partition of date $2, the carry of the
-- previous date that has one ($1, '' for none) with date $2's perpdex_accounts_daily and
-- perpdex_fills_daily rows folded in, per wallet (query/perpdex_carry.go). Folding is
-- exact: the last snapshot is the latest by time, the first value that of the earliest
-- day (a day's first value is the smallest of its running peaks, as a running peak
-- starts at the first value and never falls), the sums exact decimals. A partition's
-- date is its rows' day, as sql/perpdex/board.sql relies on.
SELECT wallet,
       max(last_ts)                                                        AS last_ts,
       arg_max(last_av, last_ts) FILTER (WHERE last_ts IS NOT NULL)       AS last_av,
       min(first_ts)                                                       AS first_ts,
       arg_min(first_av, first_ts) FILTER (WHERE first_ts IS NOT NULL)    AS first_av,
       sum(realized_x)                                                     AS realized_x,
       sum(fee_x)                                                          AS fee_x
FROM (
    SELECT wallet, last_ts, last_av, first_ts, first_av, realized_x, fee_x
    FROM perpdex_wallet_carry
    WHERE date = TRY_CAST($1 AS DATE)
    UNION ALL
    SELECT wallet, any_value(last_ts), any_value(last_av), CAST(day AS TIMESTAMP), min(peak),
           CAST(NULL AS DECIMAL(38, 10)), CAST(NULL AS DECIMAL(38, 10))
    FROM perpdex_accounts_daily
    WHERE date = CAST($2 AS DATE)
    GROUP BY wallet, day
    UNION ALL
    SELECT wallet, NULL, NULL, NULL, NULL, realized_x, fee_x
    FROM perpdex_fills_daily
    WHERE date = CAST($2 AS DATE)
)
GROUP BY wallet
