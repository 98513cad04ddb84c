-- PerpdexBoard computes every trader metric of one window for every wallet that has a
-- fill in it: the rows behind /leaderboard and /leaderboard/flow-adjusted.
-- $1 window start (inclusive), $2 window end (exclusive; the board hour), $3 <= wallet
-- < $4: one group of wallet buckets (query/perpdex_board.go runs the groups in order and
-- concatenates them, so one pass holds a quarter of the window's rows; every figure
-- is per wallet, so the rows are those of one pass over every wallet), $5 the snapshot
-- whose today's labels the board shows (perpdex_cohorts_at: the newest at or before
-- the board hour, query/perpdex_cohorts_at.go), $6 and $7 the position batches at or
-- before the window start and the board hour (sql/perpdex/board_batches.sql, once per
-- window: bound as values, their filter reaches the Parquet reader, where a join with
-- them read every position row of the pass; NULL when there is none), $8 and $9 the
-- first and the end of the complete days of the window (midnights; query/perpdex_board.go
-- perpdexBoardDays): fw, life, lev, fund and the drawdown segments (seg) read the days between from the per-day
-- partial sums (perpdex_fills_daily, perpdex_positions_daily, perpdex_funding_daily,
-- perpdex_accounts_daily). $10 and $11 are the perpdex_wallet_carry dates of the
-- carry across days (query/perpdex_carry.go: the newest before the window start's day
-- and before $9's; NULL without the partial sums): the equity at the window's ends (av)
-- and the lifetime PnL (life) fold two dates of it where they read every day before $9.
-- $12 true (the partial sums published) reads the leverage of the partial edge days and
-- the uPnL of the position batches from perpdex_positions_snaps (per wallet and
-- snapshot, sorted by wallet) instead of the raw positions, which every pass read
-- whole. $13 is the window "all"'s carry date ($11; NULL for other windows or without
-- the carry): the fills, drawdowns, leverage and funding of its complete days (every day
-- before $9) come from that one date of the carry instead of every day's partial sums.
-- $14 is the window "all"'s perpdex_trades_carry date (query/perpdex_trades_carry.go;
-- NULL for other windows or without one) and $15 the instant its raw trades start (the
-- midnight after $14, else $1): the trade counts, sums and streaks up to it come from
-- that one date instead of a window over every closed trade of the history.
-- The date conditions beside the time ones let DuckDB skip whole date partitions
-- before opening them (a partition's date is its rows' time's date, as
-- cohort_snapshot_at.sql also relies on): with a year of files, a window opens its own.
-- The bound times are compared as TIMESTAMP ($1::TIMESTAMP; the connections are in UTC,
-- internal/duckconn): a time.Time arrives WITH TIME ZONE, and comparing a column with
-- it casts the column, which keeps DuckDB from skipping row groups by their statistics
-- (the closed trades' history segment was read whole for the window 1d).
WITH fd AS (
    -- The window's fills per wallet and day: complete days ($8 <= day < $9) from their
    -- published partial sums (perpdex_fills_daily), the partial days at the edges
    -- ([$1, $8) and [$9, $2)) from the fills themselves. Exact decimal sums, so the
    -- grouping does not change a bit. $8 = $9 = the epoch reads every day raw. The
    -- window "all" ($13, its carry date) takes every complete day as one row of the
    -- carry, with its count of days with fills (nd) and its last one (ld).
    SELECT wallet, day, realized_x, fee_x, volume_x, CAST(NULL AS BIGINT) AS nd, CAST(NULL AS DATE) AS ld
    FROM perpdex_fills_daily
    WHERE $13 IS NULL AND day >= CAST($8::TIMESTAMP AS DATE) AND day < CAST($9::TIMESTAMP AS DATE)
      AND date >= CAST($8::TIMESTAMP AS DATE) AND date < CAST($9::TIMESTAMP AS DATE) AND wallet >= $3 AND wallet < $4
    UNION ALL
    SELECT wallet, NULL, realized_x, fee_x, volume_x, fill_days, last_fill_day
    FROM perpdex_wallet_carry
    WHERE date = CAST($13 AS DATE) AND fill_days > 0 AND wallet >= $3 AND wallet < $4
    UNION ALL
    SELECT wallet, CAST(time AS DATE), sum(CAST(closed_pnl AS DECIMAL(38, 10))), sum(CAST(fee AS DECIMAL(38, 10))),
           sum(CAST(px * sz AS DECIMAL(38, 10))), NULL, NULL
    FROM (SELECT * FROM perpdex_fills
          WHERE time >= $1::TIMESTAMP AND time < $8::TIMESTAMP AND date >= CAST($1::TIMESTAMP AS DATE) AND date <= CAST($8::TIMESTAMP AS DATE)
          UNION ALL
          SELECT * FROM perpdex_fills
          WHERE time >= $9::TIMESTAMP AND time >= $1::TIMESTAMP AND time < $2::TIMESTAMP AND date >= CAST($9::TIMESTAMP AS DATE) AND date >= CAST($1::TIMESTAMP AS DATE)
            AND date <= CAST($2::TIMESTAMP AS DATE))
    WHERE wallet >= $3 AND wallet < $4
    GROUP BY ALL
), fw AS (
    SELECT wallet,
           sum(realized_x)::DOUBLE      AS realized_gross,
           sum(fee_x)::DOUBLE           AS fees,
           sum(volume_x)::DOUBLE        AS volume,
           -- the carry's days are before $9, the raw days on or after it: none twice
           CAST(count(DISTINCT day) + coalesce(sum(nd), 0) AS BIGINT) AS active_days,
           max(coalesce(ld, day))       AS last_day
    FROM fd
    GROUP BY wallet
), life AS (
    -- Lifetime to the board hour: every complete day before $9 from the carry of the
    -- newest date before it ($11, the sums of every date up to it, and no date lies
    -- between), else from the partial sums; the rest raw.
    SELECT wallet, (sum(pnl_x) - sum(fee_x))::DOUBLE AS cum
    FROM (SELECT wallet, realized_x AS pnl_x, fee_x
          FROM perpdex_fills_daily
          WHERE $11 IS NULL
            AND day < CAST($9::TIMESTAMP AS DATE) AND date < CAST($9::TIMESTAMP AS DATE) AND wallet >= $3 AND wallet < $4 AND wallet IN (SELECT wallet FROM fw)
          UNION ALL
          SELECT wallet, realized_x, fee_x
          FROM perpdex_wallet_carry
          WHERE date = CAST($11 AS DATE) AND wallet >= $3 AND wallet < $4 AND wallet IN (SELECT wallet FROM fw)
          UNION ALL
          SELECT wallet, CAST(closed_pnl AS DECIMAL(38, 10)), CAST(fee AS DECIMAL(38, 10))
          FROM perpdex_fills
          WHERE time >= $9::TIMESTAMP AND time < $2::TIMESTAMP AND date >= CAST($9::TIMESTAMP AS DATE) AND date <= CAST($2::TIMESTAMP AS DATE) AND wallet >= $3 AND wallet < $4 AND wallet IN (SELECT wallet FROM fw))
    GROUP BY wallet
), t AS (
    -- The window's complete trades ($15 = $1), or, for the window "all" with its carry
    -- ($14), the trades after the carry's date ($15, the next midnight).
    SELECT wallet, direction, CAST(realized_pnl AS DECIMAL(38, 10)) AS pnl, trade_no, asset, close_ts,
           (epoch_us(close_ts) - epoch_us(open_ts)) // 1000000 AS dur,
           CASE WHEN realized_pnl > 0 THEN 'w' WHEN realized_pnl < 0 THEN 'l' ELSE 'f' END AS cls
    FROM perpdex_closed_trades
    WHERE is_complete AND close_ts >= $15::TIMESTAMP AND close_ts < $2::TIMESTAMP AND wallet >= $3 AND wallet < $4
), tc AS (
    -- The window "all"'s trades up to the end of $14 (perpdex_trades_carry).
    SELECT * EXCLUDE (date) FROM perpdex_trades_carry WHERE date = CAST($14 AS DATE) AND wallet >= $3 AND wallet < $4
), tr AS (
    -- Exact decimal sums (each trade's PnL to 10 places), so the carry's grouping gives
    -- the same bits as the trades one by one; the counts and sums of a group of trades
    -- are sql/perpdex/trade_sums_macro.sql's, as the carry's.
    SELECT wallet, CAST(sum(n) AS BIGINT) AS n, CAST(sum(wins) AS BIGINT) AS wins, CAST(sum(losses) AS BIGINT) AS losses, CAST(sum(longs) AS BIGINT) AS longs,
           CAST(sum(long_wins) AS BIGINT) AS long_wins, CAST(sum(shorts) AS BIGINT) AS shorts, CAST(sum(short_wins) AS BIGINT) AS short_wins,
           sum(long_pnl_x)::DOUBLE AS long_pnl, sum(short_pnl_x)::DOUBLE AS short_pnl,
           sum(gross_win_x)::DOUBLE AS gross_win, sum(gross_loss_x)::DOUBLE AS gross_loss,
           sum(pnl_x)::DOUBLE / sum(n) AS expectancy, CAST(sum(dur_s) AS DOUBLE) / sum(n) AS avg_dur
    FROM (SELECT wallet, s.n, s.wins, s.losses, s.longs, s.long_wins, s.shorts, s.short_wins, s.long_pnl_x, s.short_pnl_x,
                 s.gross_win_x, s.gross_loss_x, s.pnl_x, s.dur_s
          FROM (SELECT wallet, pd_trade_sums(cls, direction, pnl, dur) AS s FROM t GROUP BY wallet)
          UNION ALL
          SELECT wallet, n, wins, losses, longs, long_wins, shorts, short_wins, long_pnl_x, short_pnl_x,
                 gross_win_x, gross_loss_x, pnl_x, dur_s
          FROM tc)
    GROUP BY wallet
), runs AS (
    -- Streaks in one sort: a win's count of non-wins before it (nw) is the same for
    -- every win of its run and differs between runs, and so for losses (nl); a flat
    -- trade ends both.
    SELECT wallet, cls,
           count(*) FILTER (WHERE cls <> 'w') OVER o AS nw,
           count(*) FILTER (WHERE cls <> 'l') OVER o AS nl
    FROM t
    WINDOW o AS (PARTITION BY wallet ORDER BY close_ts, asset, trade_no ROWS UNBOUNDED PRECEDING)
), streaks AS (
    -- The carry's run at the end of $14 continues into the trades' first run (grp 0).
    SELECT wallet, max(w) AS win_streak, max(l) AS loss_streak
    FROM (SELECT r.wallet,
                 CASE WHEN r.cls = 'w' THEN r.len + CASE WHEN r.grp = 0 THEN coalesce(tc.run_w, 0) ELSE 0 END ELSE 0 END AS w,
                 CASE WHEN r.cls = 'l' THEN r.len + CASE WHEN r.grp = 0 THEN coalesce(tc.run_l, 0) ELSE 0 END ELSE 0 END AS l
          FROM (SELECT wallet, cls, CASE WHEN cls = 'w' THEN nw ELSE nl END AS grp, count(*) AS len
                FROM runs WHERE cls <> 'f' GROUP BY ALL) r
          LEFT JOIN tc ON tc.wallet = r.wallet
          UNION ALL
          SELECT wallet, max_w, max_l FROM tc)
    GROUP BY wallet
), seg AS (
    -- The window's equity series ($1 and $2 both included) as per-day segments where
    -- each day's running peak rises (sql/perpdex/accounts_daily.sql): complete days from
    -- perpdex_accounts_daily, the partial edge days from the snapshots, same shape. The
    -- window "all" ($13) takes every complete day as one unit of the carry, on the carry's
    -- date: the peak so far, the last snapshot, and the largest drawdown of those days
    -- (dd_pct, dd_usd: folded as dd folds a window's days).
    SELECT wallet, day, peak, low, last_ts, last_av, CAST(NULL AS DOUBLE) AS dd_pct, CAST(NULL AS DOUBLE) AS dd_usd
    FROM perpdex_accounts_daily
    WHERE $13 IS NULL AND day >= CAST($8::TIMESTAMP AS DATE) AND day < CAST($9::TIMESTAMP AS DATE)
      AND date >= CAST($8::TIMESTAMP AS DATE) AND date < CAST($9::TIMESTAMP AS DATE)
      AND wallet >= $3 AND wallet < $4 AND wallet IN (SELECT wallet FROM fw)
    UNION ALL
    SELECT wallet, CAST($13 AS DATE), peak, NULL, last_ts, last_av, dd_pct, dd_usd
    FROM perpdex_wallet_carry
    WHERE date = CAST($13 AS DATE) AND last_ts IS NOT NULL
      AND wallet >= $3 AND wallet < $4 AND wallet IN (SELECT wallet FROM fw)
    UNION ALL
    SELECT wallet, day, peak, min(account_value), any_value(last_ts), any_value(last_av), NULL, NULL
    FROM (SELECT wallet, day, account_value,
                 max(account_value) OVER (PARTITION BY wallet, day ORDER BY snapshot_ts
                                          ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS peak,
                 max(snapshot_ts) OVER (PARTITION BY wallet, day)                           AS last_ts,
                 arg_max(account_value, snapshot_ts) OVER (PARTITION BY wallet, day)        AS last_av
          FROM (SELECT wallet, CAST(snapshot_ts AS DATE) AS day, snapshot_ts, account_value
                FROM perpdex_accounts
                WHERE snapshot_ts >= $1::TIMESTAMP AND snapshot_ts < $8::TIMESTAMP AND date >= CAST($1::TIMESTAMP AS DATE) AND date <= CAST($8::TIMESTAMP AS DATE)
                  AND wallet >= $3 AND wallet < $4 AND wallet IN (SELECT wallet FROM fw)
                UNION ALL
                SELECT wallet, CAST(snapshot_ts AS DATE), snapshot_ts, account_value
                FROM perpdex_accounts
                WHERE snapshot_ts >= $9::TIMESTAMP AND snapshot_ts >= $1::TIMESTAMP AND snapshot_ts <= $2::TIMESTAMP
                  AND date >= CAST($9::TIMESTAMP AS DATE) AND date >= CAST($1::TIMESTAMP AS DATE) AND date <= CAST($2::TIMESTAMP AS DATE)
                  AND wallet >= $3 AND wallet < $4 AND wallet IN (SELECT wallet FROM fw)))
    GROUP BY wallet, day, peak
), carried AS (
    -- Per wallet and day: the peak carried from the window's earlier days, and the
    -- window's peak (the running peak at its last snapshot).
    SELECT wallet, day, last_ts, last_av,
           max(day_peak) OVER (PARTITION BY wallet ORDER BY day ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS before_peak,
           max(day_peak) OVER (PARTITION BY wallet) AS all_peak
    FROM (SELECT wallet, day, max(peak) AS day_peak, any_value(last_ts) AS last_ts, any_value(last_av) AS last_av
          FROM seg GROUP BY wallet, day)
), dd AS (
    -- A segment's running peak is the larger of its day's and the carried one; its
    -- largest drawdown is at its lowest value (the drawdown falls as the value rises).
    SELECT s.wallet,
           max(coalesce(s.dd_pct,
                        CASE WHEN greatest(coalesce(c.before_peak, s.peak), s.peak) > 0
                             THEN (greatest(coalesce(c.before_peak, s.peak), s.peak) - s.low) / greatest(coalesce(c.before_peak, s.peak), s.peak) * 100
                             ELSE 0 END)) AS max_dd_pct,
           max(coalesce(s.dd_usd, greatest(coalesce(c.before_peak, s.peak), s.peak) - s.low)) AS max_dd_usd
    FROM seg s JOIN carried c ON c.wallet = s.wallet AND c.day = s.day
    GROUP BY s.wallet
), cur AS (
    -- The drawdown at the window's last snapshot, from the window's peak.
    SELECT wallet, arg_max(CASE WHEN all_peak > 0 THEN (all_peak - last_av) / all_peak * 100 ELSE 0 END, last_ts) AS cur_dd_pct
    FROM carried
    GROUP BY wallet
), av AS (
    -- Equity at the board hour (the last snapshot at or before it) and at the window
    -- start: the last snapshot at or before it, else (a window reaching before the
    -- account series) the first snapshot inside the window. One pass over per-day units
    -- instead of every snapshot of the history: each complete day before $9 other than
    -- the window start's from perpdex_accounts_daily (its last snapshot: last_ts,
    -- last_av, what arg_max gives over the day's snapshots; its first value: the
    -- smallest of its running peaks, as a running peak starts at the first value and
    -- never falls), keyed by the day's midnight for the first value; the days of $1 and
    -- of the board hour from the snapshots, each one a unit. A day's units are all on one
    -- side of $1 (its own day is raw), so the filters pick the days the snapshots would.
    -- $9 = the epoch (no partial sums) reads every snapshot.
    -- With the carry ($10, $11) the complete days come as two units instead: the carry
    -- of the newest date before the window start's day (its last snapshot is the last
    -- before that day; its first day is before $1, so it never counts as a first value
    -- inside the window) and of the newest before $9 (the last snapshot before $9; its
    -- first day, counted when after $1, is the wallet's first, which is the earliest
    -- unit after $1 whenever no unit at or before $1 exists and the start's day has no
    -- snapshot after $1; otherwise those decide, as over the day units).
    SELECT wallet,
           arg_max(last_av, last_ts) AS av_end,
           coalesce(arg_max(last_av, last_ts) FILTER (WHERE last_ts <= $1::TIMESTAMP),
                    arg_min(first_av, first_ts) FILTER (WHERE first_ts > $1::TIMESTAMP)) AS av_start
    FROM (SELECT wallet, any_value(last_ts) AS last_ts, any_value(last_av) AS last_av,
                 CAST(day AS TIMESTAMP) AS first_ts, min(peak) AS first_av
          FROM perpdex_accounts_daily
          WHERE $11 IS NULL
            AND day < CAST($9::TIMESTAMP AS DATE) AND date < CAST($9::TIMESTAMP AS DATE)
            AND day <> CAST($1::TIMESTAMP AS DATE) AND date <> CAST($1::TIMESTAMP AS DATE)
            AND wallet >= $3 AND wallet < $4 AND wallet IN (SELECT wallet FROM fw)
          GROUP BY wallet, day
          UNION ALL
          SELECT wallet, last_ts, last_av, first_ts, first_av
          FROM perpdex_wallet_carry
          WHERE (date = CAST($10 AS DATE) OR date = CAST($11 AS DATE)) AND last_ts IS NOT NULL
            AND wallet >= $3 AND wallet < $4 AND wallet IN (SELECT wallet FROM fw)
          UNION ALL
          SELECT wallet, snapshot_ts, account_value, snapshot_ts, account_value
          FROM perpdex_accounts
          WHERE snapshot_ts >= $9::TIMESTAMP AND snapshot_ts <= $2::TIMESTAMP AND date >= CAST($9::TIMESTAMP AS DATE) AND date <= CAST($2::TIMESTAMP AS DATE)
            AND wallet >= $3 AND wallet < $4 AND wallet IN (SELECT wallet FROM fw)
          UNION ALL
          SELECT wallet, snapshot_ts, account_value, snapshot_ts, account_value
          FROM perpdex_accounts
          WHERE snapshot_ts < $9::TIMESTAMP AND date = CAST($1::TIMESTAMP AS DATE)
            AND wallet >= $3 AND wallet < $4 AND wallet IN (SELECT wallet FROM fw))
    GROUP BY wallet
), lev AS (
    -- Mean leverage over the window's position snapshots ($1 and $2 both included):
    -- complete days from perpdex_positions_daily, the edges raw; an exact decimal sum
    -- over the count, so the grouping does not change a bit.
    SELECT wallet, CAST(sum(lev_x) AS DOUBLE) / nullif(sum(lev_n), 0) AS avg_lev
    FROM (SELECT wallet, leverage_x AS lev_x, leverage_n AS lev_n
          FROM perpdex_positions_daily
          WHERE $13 IS NULL AND day >= CAST($8::TIMESTAMP AS DATE) AND day < CAST($9::TIMESTAMP AS DATE)
            AND date >= CAST($8::TIMESTAMP AS DATE) AND date < CAST($9::TIMESTAMP AS DATE)
            AND wallet >= $3 AND wallet < $4 AND wallet IN (SELECT wallet FROM fw)
          UNION ALL
          SELECT wallet, lev_x, lev_n
          FROM perpdex_wallet_carry
          WHERE date = CAST($13 AS DATE) AND lev_n IS NOT NULL
            AND wallet >= $3 AND wallet < $4 AND wallet IN (SELECT wallet FROM fw)
          UNION ALL
          SELECT wallet, CAST(leverage AS DECIMAL(38, 10)), CAST(leverage IS NOT NULL AS BIGINT)
          FROM perpdex_positions
          WHERE NOT $12 AND snapshot_ts >= $1::TIMESTAMP AND snapshot_ts < $8::TIMESTAMP AND date >= CAST($1::TIMESTAMP AS DATE) AND date <= CAST($8::TIMESTAMP AS DATE)
            AND wallet >= $3 AND wallet < $4 AND wallet IN (SELECT wallet FROM fw)
          UNION ALL
          SELECT wallet, CAST(leverage AS DECIMAL(38, 10)), CAST(leverage IS NOT NULL AS BIGINT)
          FROM perpdex_positions
          WHERE NOT $12 AND snapshot_ts >= $9::TIMESTAMP AND snapshot_ts >= $1::TIMESTAMP AND snapshot_ts <= $2::TIMESTAMP
            AND date >= CAST($9::TIMESTAMP AS DATE) AND date >= CAST($1::TIMESTAMP AS DATE) AND date <= CAST($2::TIMESTAMP AS DATE)
            AND wallet >= $3 AND wallet < $4 AND wallet IN (SELECT wallet FROM fw)
          UNION ALL
          -- the same edges from the per-snapshot sums (exact decimals: the same sum); each
          -- edge its own branch, as an OR of the two date ranges opens every date's file
          SELECT wallet, leverage_x, leverage_n
          FROM perpdex_positions_snaps
          WHERE $12 AND snapshot_ts >= $1::TIMESTAMP AND snapshot_ts < $8::TIMESTAMP AND date >= CAST($1::TIMESTAMP AS DATE) AND date <= CAST($8::TIMESTAMP AS DATE)
            AND wallet >= $3 AND wallet < $4 AND wallet IN (SELECT wallet FROM fw)
          UNION ALL
          SELECT wallet, leverage_x, leverage_n
          FROM perpdex_positions_snaps
          WHERE $12 AND snapshot_ts >= $9::TIMESTAMP AND snapshot_ts >= $1::TIMESTAMP AND snapshot_ts <= $2::TIMESTAMP
            AND date >= CAST($9::TIMESTAMP AS DATE) AND date >= CAST($1::TIMESTAMP AS DATE) AND date <= CAST($2::TIMESTAMP AS DATE)
            AND wallet >= $3 AND wallet < $4 AND wallet IN (SELECT wallet FROM fw))
    GROUP BY wallet
), fund AS (
    -- Funding paid in the window: complete days from perpdex_funding_daily, the edges raw.
    SELECT wallet, -CAST(sum(usdc_x) AS DOUBLE) AS paid
    FROM (SELECT wallet, usdc_x
          FROM perpdex_funding_daily
          WHERE $13 IS NULL AND day >= CAST($8::TIMESTAMP AS DATE) AND day < CAST($9::TIMESTAMP AS DATE)
            AND date >= CAST($8::TIMESTAMP AS DATE) AND date < CAST($9::TIMESTAMP AS DATE) AND wallet >= $3 AND wallet < $4
          UNION ALL
          SELECT wallet, funding_x
          FROM perpdex_wallet_carry
          WHERE date = CAST($13 AS DATE) AND funding_x IS NOT NULL AND wallet >= $3 AND wallet < $4
          UNION ALL
          SELECT wallet, CAST(usdc AS DECIMAL(38, 10))
          FROM perpdex_funding
          WHERE time >= $1::TIMESTAMP AND time < $8::TIMESTAMP AND date >= CAST($1::TIMESTAMP AS DATE) AND date <= CAST($8::TIMESTAMP AS DATE) AND wallet >= $3 AND wallet < $4
          UNION ALL
          SELECT wallet, CAST(usdc AS DECIMAL(38, 10))
          FROM perpdex_funding
          WHERE time >= $9::TIMESTAMP AND time >= $1::TIMESTAMP AND time < $2::TIMESTAMP
            AND date >= CAST($9::TIMESTAMP AS DATE) AND date >= CAST($1::TIMESTAMP AS DATE) AND date <= CAST($2::TIMESTAMP AS DATE) AND wallet >= $3 AND wallet < $4)
    GROUP BY wallet
), flows AS (
    SELECT wallet,
           coalesce(sum(usdc) FILTER (WHERE kind = 'deposit'), 0)  AS dep,
           coalesce(sum(usdc) FILTER (WHERE kind = 'withdraw'), 0) AS wd,
           coalesce(sum(usdc) FILTER (WHERE kind = 'send_in'), 0)  AS sin,
           coalesce(sum(usdc) FILTER (WHERE kind = 'send_out'), 0) AS sout,
           count(*) FILTER (WHERE kind IN ('send_in', 'send_out')) AS sends
    FROM perpdex_ledger
    WHERE time >= $1::TIMESTAMP AND time < $2::TIMESTAMP AND date >= CAST($1::TIMESTAMP AS DATE) AND date <= CAST($2::TIMESTAMP AS DATE) AND wallet >= $3 AND wallet < $4
    GROUP BY wallet
), upnl AS (
    -- From the raw positions, or ($12) their per-snapshot sums: one row per wallet and
    -- batch, the sum over the same positions.
    SELECT wallet,
           coalesce(sum(unrealized_pnl) FILTER (WHERE snapshot_ts = $7::TIMESTAMP), 0)
         - coalesce(sum(unrealized_pnl) FILTER (WHERE snapshot_ts = $6::TIMESTAMP), 0) AS delta
    FROM (SELECT wallet, snapshot_ts, unrealized_pnl
          FROM perpdex_positions
          WHERE NOT $12
            AND (snapshot_ts = $6::TIMESTAMP OR snapshot_ts = $7::TIMESTAMP) AND (date = CAST($6::TIMESTAMP AS DATE) OR date = CAST($7::TIMESTAMP AS DATE)) AND wallet >= $3 AND wallet < $4
          UNION ALL
          SELECT wallet, snapshot_ts, unrealized_pnl
          FROM perpdex_positions_snaps
          WHERE $12
            AND (snapshot_ts = $6::TIMESTAMP OR snapshot_ts = $7::TIMESTAMP) AND (date = CAST($6::TIMESTAMP AS DATE) OR date = CAST($7::TIMESTAMP AS DATE)) AND wallet >= $3 AND wallet < $4)
    GROUP BY wallet
)
SELECT fw.wallet,
       coalesce(av.av_end, 0)                 AS account_value,
       coalesce(av.av_start, 0)               AS account_value_start,
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
       coalesce(dd.max_dd_pct, 0), coalesce(cur.cur_dd_pct, 0), coalesce(dd.max_dd_usd, 0),
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
LEFT JOIN cur USING (wallet)
LEFT JOIN av USING (wallet)
LEFT JOIN lev USING (wallet)
LEFT JOIN fund USING (wallet)
LEFT JOIN flows USING (wallet)
LEFT JOIN upnl USING (wallet)
LEFT JOIN perpdex_cohorts_at($5::TIMESTAMP) cc USING (wallet)
ORDER BY fw.wallet;
