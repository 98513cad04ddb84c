-- The oracle of TestPerpdexBoardSame: sql/perpdex/board.sql as it was before the
-- per-day partial sums, with exact decimal sums and mean leverage, and exact decimal
-- sums of the trades' PnL (the only changes of figures).
-- PerpdexBoard computes every trader metric of one window for every wallet that has a
-- fill in it: the rows behind /leaderboard and /leaderboard/flow-adjusted.
-- $1 window start (inclusive), $2 window end (exclusive; the board hour), $3 <= wallet
-- < $4: one bucket of wallets (query/perpdex_board.go runs the buckets in order and
-- concatenates them, so one pass holds a sixteenth of the window's rows; every figure
-- is per wallet, so the rows are those of one pass over every wallet), $5 the snapshot
-- whose today's labels the board shows (perpdex_cohorts_at: the newest at or before
-- the board hour, query/perpdex_cohorts_at.go).
WITH fw AS (
    SELECT wallet,
           sum(CAST(closed_pnl AS DECIMAL(38, 10)))::DOUBLE AS realized_gross,
           sum(CAST(fee AS DECIMAL(38, 10)))::DOUBLE        AS fees,
           sum(CAST(px * sz AS DECIMAL(38, 10)))::DOUBLE    AS volume,
           count(DISTINCT CAST(time AS DATE)) AS active_days,
           max(CAST(time AS DATE))      AS last_day
    FROM perpdex_fills
    WHERE time >= $1 AND time < $2 AND wallet >= $3 AND wallet < $4
    GROUP BY wallet
), life AS (
    SELECT wallet, (sum(CAST(closed_pnl AS DECIMAL(38, 10))) - sum(CAST(fee AS DECIMAL(38, 10))))::DOUBLE AS cum
    FROM perpdex_fills
    WHERE time < $2 AND wallet >= $3 AND wallet < $4 AND wallet IN (SELECT wallet FROM fw)
    GROUP BY wallet
), t AS (
    SELECT wallet, direction, realized_pnl, trade_no, asset, close_ts,
           (epoch_us(close_ts) - epoch_us(open_ts)) // 1000000 AS dur,
           CASE WHEN realized_pnl > 0 THEN 'w' WHEN realized_pnl < 0 THEN 'l' ELSE 'f' END AS cls
    FROM perpdex_closed_trades
    WHERE is_complete AND close_ts >= $1 AND close_ts < $2 AND wallet >= $3 AND wallet < $4
), tr AS (
    SELECT wallet,
           count(*)                                                  AS n,
           count(*) FILTER (WHERE cls = 'w')                         AS wins,
           count(*) FILTER (WHERE cls = 'l')                         AS losses,
           count(*) FILTER (WHERE direction = 'long')                AS longs,
           count(*) FILTER (WHERE direction = 'long' AND cls = 'w')  AS long_wins,
           count(*) FILTER (WHERE direction = 'short')               AS shorts,
           count(*) FILTER (WHERE direction = 'short' AND cls = 'w') AS short_wins,
           coalesce(sum(CAST(realized_pnl AS DECIMAL(38, 10))) FILTER (WHERE direction = 'long'), 0)::DOUBLE  AS long_pnl,
           coalesce(sum(CAST(realized_pnl AS DECIMAL(38, 10))) FILTER (WHERE direction = 'short'), 0)::DOUBLE AS short_pnl,
           coalesce(sum(CAST(realized_pnl AS DECIMAL(38, 10))) FILTER (WHERE cls = 'w'), 0)::DOUBLE   AS gross_win,
           coalesce(sum(CAST(realized_pnl AS DECIMAL(38, 10))) FILTER (WHERE cls = 'l'), 0)::DOUBLE   AS gross_loss,
           sum(CAST(realized_pnl AS DECIMAL(38, 10)))::DOUBLE / count(*) AS expectancy,
           avg(dur)                                                  AS avg_dur
    FROM t
    GROUP BY wallet
), runs AS (
    SELECT wallet, cls,
           row_number() OVER (PARTITION BY wallet ORDER BY close_ts, asset, trade_no)
         - row_number() OVER (PARTITION BY wallet, cls ORDER BY close_ts, asset, trade_no) AS grp
    FROM t
), streaks AS (
    SELECT wallet,
           coalesce(max(len) FILTER (WHERE cls = 'w'), 0) AS win_streak,
           coalesce(max(len) FILTER (WHERE cls = 'l'), 0) AS loss_streak
    FROM (SELECT wallet, cls, grp, count(*) AS len FROM runs GROUP BY ALL)
    GROUP BY wallet
), series AS (
    SELECT wallet, snapshot_ts, account_value,
           max(account_value) OVER (PARTITION BY wallet ORDER BY snapshot_ts
                                    ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS peak
    FROM perpdex_accounts
    WHERE snapshot_ts >= $1 AND snapshot_ts <= $2 AND wallet >= $3 AND wallet < $4 AND wallet IN (SELECT wallet FROM fw)
), dd AS (
    SELECT wallet,
           max(CASE WHEN peak > 0 THEN (peak - account_value) / peak * 100 ELSE 0 END) AS max_dd_pct,
           arg_max(CASE WHEN peak > 0 THEN (peak - account_value) / peak * 100 ELSE 0 END, snapshot_ts) AS cur_dd_pct,
           max(peak - account_value) AS max_dd_usd
    FROM series
    GROUP BY wallet
), av_end AS (
    SELECT wallet, arg_max(account_value, snapshot_ts) AS av
    FROM perpdex_accounts
    WHERE snapshot_ts <= $2 AND wallet >= $3 AND wallet < $4 AND wallet IN (SELECT wallet FROM fw)
    GROUP BY wallet
), av_start AS (
    -- Equity at the window start: the last snapshot at or before it, else (a window
    -- reaching before the account series) the first snapshot inside the window.
    SELECT wallet,
           coalesce(arg_max(account_value, snapshot_ts) FILTER (WHERE snapshot_ts <= $1),
                    arg_min(account_value, snapshot_ts) FILTER (WHERE snapshot_ts > $1)) AS av
    FROM perpdex_accounts
    WHERE snapshot_ts <= $2 AND wallet >= $3 AND wallet < $4 AND wallet IN (SELECT wallet FROM fw)
    GROUP BY wallet
), lev AS (
    SELECT wallet, CAST(sum(CAST(leverage AS DECIMAL(38, 10))) AS DOUBLE) / nullif(count(leverage), 0) AS avg_lev
    FROM perpdex_positions
    WHERE snapshot_ts >= $1 AND snapshot_ts <= $2 AND wallet >= $3 AND wallet < $4 AND wallet IN (SELECT wallet FROM fw)
    GROUP BY wallet
), fund AS (
    SELECT wallet, -CAST(sum(CAST(usdc AS DECIMAL(38, 10))) AS DOUBLE) AS paid
    FROM perpdex_funding
    WHERE time >= $1 AND time < $2 AND wallet >= $3 AND wallet < $4
    GROUP BY wallet
), flows AS (
    SELECT wallet,
           coalesce(sum(usdc) FILTER (WHERE kind = 'deposit'), 0)  AS dep,
           coalesce(sum(usdc) FILTER (WHERE kind = 'withdraw'), 0) AS wd,
           coalesce(sum(usdc) FILTER (WHERE kind = 'send_in'), 0)  AS sin,
           coalesce(sum(usdc) FILTER (WHERE kind = 'send_out'), 0) AS sout,
           count(*) FILTER (WHERE kind IN ('send_in', 'send_out')) AS sends
    FROM perpdex_ledger
    WHERE time >= $1 AND time < $2 AND wallet >= $3 AND wallet < $4
    GROUP BY wallet
), batches AS (
    SELECT (SELECT max(snapshot_ts) FROM perpdex_positions WHERE snapshot_ts <= $1) AS b_start,
           (SELECT max(snapshot_ts) FROM perpdex_positions WHERE snapshot_ts <= $2) AS b_end
), upnl AS (
    SELECT p.wallet,
           coalesce(sum(p.unrealized_pnl) FILTER (WHERE p.snapshot_ts = b.b_end), 0)
         - coalesce(sum(p.unrealized_pnl) FILTER (WHERE p.snapshot_ts = b.b_start), 0) AS delta
    FROM perpdex_positions p, batches b
    WHERE (p.snapshot_ts = b.b_start OR p.snapshot_ts = b.b_end) AND p.wallet >= $3 AND p.wallet < $4
    GROUP BY p.wallet
)
SELECT fw.wallet,
       coalesce(av_end.av, 0)                 AS account_value,
       coalesce(av_start.av, 0)               AS account_value_start,
       fw.realized_gross,
       fw.fees,
       fw.volume,
       coalesce(life.cum, 0)                  AS cum,
       coalesce(tr.n, 0), coalesce(tr.wins, 0), coalesce(tr.losses, 0),
       coalesce(tr.longs, 0), coalesce(tr.long_wins, 0), coalesce(tr.shorts, 0), coalesce(tr.short_wins, 0),
       coalesce(tr.long_pnl, 0), coalesce(tr.short_pnl, 0),
       coalesce(tr.gross_win, 0), coalesce(tr.gross_loss, 0),
       tr.expectancy, tr.avg_dur,
       coalesce(streaks.win_streak, 0), coalesce(streaks.loss_streak, 0),
       coalesce(dd.max_dd_pct, 0), coalesce(dd.cur_dd_pct, 0), coalesce(dd.max_dd_usd, 0),
       lev.avg_lev,
       coalesce(fund.paid, 0),
       coalesce(flows.dep, 0), coalesce(flows.wd, 0), coalesce(flows.sin, 0), coalesce(flows.sout, 0),
       coalesce(flows.sends, 0),
       coalesce(upnl.delta, 0),
       fw.active_days, fw.last_day,
       cc.size_cohort, cc.pnl_cohort, cc.pnl_cohort_tag, cc.style_cohort_tag
FROM fw
LEFT JOIN life USING (wallet)
LEFT JOIN tr USING (wallet)
LEFT JOIN streaks USING (wallet)
LEFT JOIN dd USING (wallet)
LEFT JOIN av_end USING (wallet)
LEFT JOIN av_start USING (wallet)
LEFT JOIN lev USING (wallet)
LEFT JOIN fund USING (wallet)
LEFT JOIN flows USING (wallet)
LEFT JOIN upnl USING (wallet)
LEFT JOIN perpdex_cohorts_at($5::TIMESTAMP) cc USING (wallet)
ORDER BY fw.wallet;
