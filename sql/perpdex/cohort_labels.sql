-- PerpdexCohortLabels returns the inputs of the cohort labels of every account
-- snapshot taken in [$1, $2] (both TIMESTAMP, inclusive): the account value, the
-- capital put in and the net capital flow in (cents) from ledger events strictly
-- before the snapshot, and whether the wallet had three fills strictly before it.
-- Same-instant events count after the snapshot (the venue snapshots first). The
-- bands are applied in Go (query/perpdex_cohort_bands.go). Needs perpdex_cohort_flows
-- and perpdex_cohort_third_fill.
SELECT a.snapshot_ts, a.wallet, a.account_value,
       coalesce(f.capital_cents, 0) AS capital_cents,
       coalesce(f.net_in_cents, 0) AS net_in_cents,
       coalesce(t.third_ts < a.snapshot_ts, false) AS three_fills
FROM (SELECT snapshot_ts, wallet, account_value
      FROM perpdex_accounts
      WHERE date >= CAST($1::TIMESTAMP AS DATE) AND date <= CAST($2::TIMESTAMP AS DATE)
        AND snapshot_ts >= $1::TIMESTAMP AND snapshot_ts <= $2::TIMESTAMP) a
ASOF LEFT JOIN perpdex_cohort_flows f ON f.wallet = a.wallet AND a.snapshot_ts > f.time
LEFT JOIN perpdex_cohort_third_fill t ON t.wallet = a.wallet
ORDER BY a.snapshot_ts, a.wallet;
