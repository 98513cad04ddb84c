-- PerpdexWallet returns one wallet's account overview: the latest account snapshot,
-- its positions in the newest batch, lifetime fill, funding and ledger totals, closed
-- trades and today's cohort labels. Nothing after the store clock counts.
-- $1 wallet, $2 store clock, $3 the snapshot of today's labels at the clock
-- (perpdex_cohorts_at, query/perpdex_cohorts_at.go).
WITH acct AS (
    SELECT max(snapshot_ts) AS ts, arg_max(account_value, snapshot_ts) AS av,
           arg_max(total_ntl_pos, snapshot_ts) AS ntl, arg_max(margin_used, snapshot_ts) AS mu
    FROM perpdex_accounts WHERE wallet = $1 AND snapshot_ts <= $2::TIMESTAMP
), batch AS (
    SELECT max(snapshot_ts) AS b FROM perpdex_positions WHERE snapshot_ts <= $2::TIMESTAMP
), pos AS (
    SELECT count(*) AS n, coalesce(sum(unrealized_pnl), 0) AS upnl, coalesce(sum(position_value), 0) AS ntl
    FROM perpdex_positions, batch WHERE snapshot_ts = batch.b AND wallet = $1
), fills AS (
    SELECT count(*) AS n, min(time) AS first_ts, max(time) AS last_ts, coalesce(sum(px * sz), 0) AS vol,
           coalesce(sum(fee), 0) AS fee, coalesce(sum(closed_pnl), 0) AS cpnl,
           count(*) FILTER (WHERE liquidation) AS liqs, count(DISTINCT coin) AS coins
    FROM perpdex_fills WHERE wallet = $1 AND time <= $2::TIMESTAMP
), fund AS (
    SELECT count(*) AS n, coalesce(sum(usdc), 0) AS usd FROM perpdex_funding WHERE wallet = $1 AND time <= $2::TIMESTAMP
), led AS (
    SELECT count(*) AS n,
           coalesce(sum(usdc) FILTER (WHERE kind = 'deposit'), 0) AS dep,
           coalesce(sum(usdc) FILTER (WHERE kind = 'withdraw'), 0) AS wd,
           coalesce(sum(usdc) FILTER (WHERE kind = 'send_in'), 0) AS sin,
           coalesce(sum(usdc) FILTER (WHERE kind = 'send_out'), 0) AS sout
    FROM perpdex_ledger WHERE wallet = $1 AND time <= $2::TIMESTAMP
), tr AS (
    SELECT count(*) AS n, count(*) FILTER (WHERE realized_pnl > 0) AS wins
    FROM perpdex_closed_trades WHERE wallet = $1 AND is_complete AND close_ts <= $2::TIMESTAMP
), coh AS (
    SELECT size_cohort, pnl_cohort, pnl_cohort_tag, style_cohort_tag, computed_at
    FROM perpdex_cohorts_at($3::TIMESTAMP) WHERE wallet = $1
)
SELECT acct.ts, acct.av, acct.ntl, acct.mu, batch.b, pos.n, pos.upnl, pos.ntl,
       fills.n, fills.first_ts, fills.last_ts, fills.vol, fills.fee, fills.cpnl, fills.liqs, fills.coins,
       fund.n, fund.usd, led.n, led.dep, led.wd, led.sin, led.sout, tr.n, tr.wins,
       coh.size_cohort, coh.pnl_cohort, coh.pnl_cohort_tag, coh.style_cohort_tag, coh.computed_at
FROM acct, batch, pos, fills, fund, led, tr
LEFT JOIN coh ON true;
