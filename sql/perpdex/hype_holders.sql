-- PerpdexHypeHolders ranks HYPE holders by spot plus staked balance (the union of both
-- sources), in the requested direction, with one HYPE price for every row.
-- $1 descending (bool), $2 rank of the last row served (0 for the first page),
-- $3 limit, $4 store clock, $5 the snapshot of today's labels at the clock
-- (perpdex_cohorts_at, query/perpdex_cohorts_at.go).
WITH b AS (
    SELECT wallet,
           coalesce(sum(amount) FILTER (WHERE source = 'spot'), 0)   AS spot,
           coalesce(sum(amount) FILTER (WHERE source = 'staked'), 0) AS staked
    FROM perpdex_hype_balances
    WHERE as_of <= $4::TIMESTAMP -- balances read by the clock (point in time)
    GROUP BY wallet
), r AS (
    SELECT *, spot + staked AS total,
           row_number() OVER (ORDER BY CASE WHEN $1 THEN -(spot + staked) ELSE spot + staked END, wallet) AS rank
    FROM b
), page AS (
    SELECT * FROM r WHERE rank > $2 ORDER BY rank LIMIT $3
), av AS (
    SELECT wallet, arg_max(account_value, snapshot_ts) AS av
    FROM perpdex_accounts
    WHERE snapshot_ts <= $4::TIMESTAMP AND wallet IN (SELECT wallet FROM page)
    GROUP BY wallet
)
SELECT page.wallet, page.rank, page.spot, page.staked, page.total, av.av, c.size_cohort, c.pnl_cohort,
       (SELECT count(*) FROM r) AS n
FROM page
LEFT JOIN av USING (wallet)
LEFT JOIN perpdex_cohorts_at($5::TIMESTAMP) c USING (wallet)
ORDER BY page.rank;
