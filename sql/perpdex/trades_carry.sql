-- PerpdexTradesCarry: the perpdex_trades_carry partition of date $2, the carry of the
-- previous date that has one ($1, '' for none) with date $2's pieces of
-- sql/perpdex/trades_days.sql (the temporary table pd_trades_days) folded in, per
-- wallet (query/perpdex_trades_carry.go). Counts and exact decimal sums add. A run
-- running at the end of the previous date continues into the date's first run, so the
-- longest is the larger of the previous longest, the date's own and the two joined; the
-- run at the end of the date is the date's last run, or, when every trade of the date
-- belongs to it (no trade that is not a win), the previous one lengthened by them all.
WITH p AS (
    SELECT * EXCLUDE (date) FROM perpdex_trades_carry WHERE date = TRY_CAST($1 AS DATE)
), s AS (
    SELECT * FROM pd_trades_days WHERE day = CAST($2 AS DATE)
)
SELECT coalesce(p.wallet, s.wallet)                                          AS wallet,
       coalesce(p.n, 0) + coalesce(s.n, 0)                                   AS n,
       coalesce(p.wins, 0) + coalesce(s.wins, 0)                             AS wins,
       coalesce(p.losses, 0) + coalesce(s.losses, 0)                         AS losses,
       coalesce(p.longs, 0) + coalesce(s.longs, 0)                           AS longs,
       coalesce(p.long_wins, 0) + coalesce(s.long_wins, 0)                   AS long_wins,
       coalesce(p.shorts, 0) + coalesce(s.shorts, 0)                         AS shorts,
       coalesce(p.short_wins, 0) + coalesce(s.short_wins, 0)                 AS short_wins,
       coalesce(p.pnl_x, 0) + coalesce(s.pnl_x, 0)                           AS pnl_x,
       coalesce(p.long_pnl_x, 0) + coalesce(s.long_pnl_x, 0)                 AS long_pnl_x,
       coalesce(p.short_pnl_x, 0) + coalesce(s.short_pnl_x, 0)               AS short_pnl_x,
       coalesce(p.gross_win_x, 0) + coalesce(s.gross_win_x, 0)               AS gross_win_x,
       coalesce(p.gross_loss_x, 0) + coalesce(s.gross_loss_x, 0)             AS gross_loss_x,
       coalesce(p.dur_s, 0) + coalesce(s.dur_s, 0)                           AS dur_s,
       greatest(coalesce(p.max_w, 0), coalesce(s.max_w, 0), coalesce(p.run_w, 0) + coalesce(s.lead_w, 0)) AS max_w,
       greatest(coalesce(p.max_l, 0), coalesce(s.max_l, 0), coalesce(p.run_l, 0) + coalesce(s.lead_l, 0)) AS max_l,
       CASE WHEN s.wallet IS NULL THEN p.run_w WHEN s.non_w = 0 THEN coalesce(p.run_w, 0) + s.n ELSE s.tail_w END AS run_w,
       CASE WHEN s.wallet IS NULL THEN p.run_l WHEN s.non_l = 0 THEN coalesce(p.run_l, 0) + s.n ELSE s.tail_l END AS run_l
FROM p FULL JOIN s ON s.wallet = p.wallet
