-- PerpdexPositionsDaily: one positions date's per-wallet leverage sum and count for the
-- perpetuals boards' average leverage (lake perpdex_positions_daily). $1 the date.
-- Exact decimal sums, as sql/perpdex/fills_daily.sql.
SELECT wallet,
       CAST(snapshot_ts AS DATE)                  AS day,
       sum(CAST(leverage AS DECIMAL(38, 10)))     AS leverage_x,
       count(leverage)                            AS leverage_n
FROM perpdex_positions
WHERE date = $1::DATE
GROUP BY wallet, day
