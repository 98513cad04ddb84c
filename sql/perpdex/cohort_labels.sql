-- PerpdexCohortLabels returns the cohort labels of every account snapshot taken in
-- [$1, $2] (both TIMESTAMP, inclusive): snapshot_ts, wallet, size_cohort, pnl_cohort
-- and pnl_cohort_tag. The inputs: the account value; the capital put in and the net
-- capital flow in (cents) from ledger events strictly before the snapshot; whether the
-- wallet had three fills strictly before it. Same-instant events count after the
-- snapshot (the venue snapshots first). Needs perpdex_cohort_flows and
-- perpdex_cohort_third_fill.
--
-- The bands come from the Go band tables (query/perpdex_cohort_bands.go), their only
-- definition: the three markers below (size, pnl and its tag) are replaced once, at
-- start, by CASE expressions made of placeholders ($3 onwards) to which every floor,
-- flag and slug is bound. They read the columns of l: account_value, three_fills, capital (the
-- capital put in, micro-USD) and pnl2 (twice the PnL, micro-USD: half-multiple floors
-- compare exactly in integers). The account value is rounded to the micro-dollar.
-- Not run on its own: perpdex/cohort_hourly.sql and perpdex/cohort_current.sql embed it.
SELECT snapshot_ts, wallet,
       __SIZE_BAND__ AS size_cohort,
       __PNL_BAND__ AS pnl_cohort,
       __PNL_TAG__ AS pnl_cohort_tag
FROM (
    SELECT a.snapshot_ts, a.wallet, a.account_value,
           coalesce(t.third_ts < a.snapshot_ts, false) AS three_fills,
           coalesce(f.capital_cents, 0) * 10000 AS capital,
           2 * (CAST(round(a.account_value * 1e6) AS BIGINT) - coalesce(f.net_in_cents, 0) * 10000) AS pnl2
    FROM (SELECT snapshot_ts, wallet, account_value
          FROM perpdex_accounts
          WHERE date >= CAST($1::TIMESTAMP AS DATE) AND date <= CAST($2::TIMESTAMP AS DATE)
            AND snapshot_ts >= $1::TIMESTAMP AND snapshot_ts <= $2::TIMESTAMP) a
    LEFT JOIN perpdex_cohort_flows f
           ON f.wallet = a.wallet AND f.time < a.snapshot_ts AND a.snapshot_ts <= f.until
    LEFT JOIN perpdex_cohort_third_fill t ON t.wallet = a.wallet
) l
