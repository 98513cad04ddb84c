-- Today's labels (the snapshot $1 of perpdex_cohorts_at) of the wallets $2
-- (comma-separated): the liquidations page's wallets, whose rows have no label of
-- their hour. perpdex_cohorts_current is sorted by wallet, so the list's bounds skip
-- most of its row groups.
SELECT wallet, size_cohort, pnl_cohort
FROM perpdex_cohorts_at($1::TIMESTAMP)
WHERE wallet IN (SELECT unnest(string_split($2, ',')));
