-- PerpdexTradesDays: the per (wallet, day) pieces perpdex_trades_carry folds, for the
-- complete trades closed on $1 (a date) or later, as one temporary table of the
-- publication's connection (query/perpdex_trades_carry.go), so folding many dates (a
-- full publication) reads the closed trades once. A day's pieces: its counts and exact
-- sums, and its streak pieces in the board's order (close_ts, asset, trade_no): the
-- longest run of wins (losses) inside the day, the run it starts with (lead_*), the run
-- it ends with (tail_*), and its trades that are not wins (not losses), which a run of
-- the previous day continues through only when there are none. A trade's count of
-- non-wins before it (nw) names its run of wins, as in sql/perpdex/board.sql: the
-- first run has nw = 0, the last nw = non_w.
CREATE OR REPLACE TEMP TABLE pd_trades_days AS
WITH t AS (
    SELECT wallet, CAST(close_ts AS DATE) AS day, direction, close_ts, asset, trade_no,
           CAST(realized_pnl AS DECIMAL(38, 10)) AS pnl,
           (epoch_us(close_ts) - epoch_us(open_ts)) // 1000000 AS dur,
           CASE WHEN realized_pnl > 0 THEN 'w' WHEN realized_pnl < 0 THEN 'l' ELSE 'f' END AS cls
    FROM perpdex_closed_trades
    WHERE is_complete AND close_ts >= CAST(CAST($1 AS DATE) AS TIMESTAMP)
), runs AS (
    SELECT wallet, day, cls,
           count(*) FILTER (WHERE cls <> 'w') OVER o AS nw,
           count(*) FILTER (WHERE cls <> 'l') OVER o AS nl
    FROM t
    WINDOW o AS (PARTITION BY wallet, day ORDER BY close_ts, asset, trade_no ROWS UNBOUNDED PRECEDING)
), agg AS (
    -- the day's counts and sums (sql/perpdex/trade_sums_macro.sql)
    SELECT wallet, day, unnest(pd_trade_sums(cls, direction, pnl, dur))
    FROM t
    GROUP BY wallet, day
), lens AS (
    SELECT wallet, day, cls, CASE WHEN cls = 'w' THEN nw ELSE nl END AS grp, count(*) AS len
    FROM runs WHERE cls <> 'f'
    GROUP BY ALL
)
SELECT a.*,
       coalesce(max(l.len) FILTER (WHERE l.cls = 'w'), 0)                      AS max_w,
       coalesce(max(l.len) FILTER (WHERE l.cls = 'l'), 0)                      AS max_l,
       coalesce(max(l.len) FILTER (WHERE l.cls = 'w' AND l.grp = 0), 0)        AS lead_w,
       coalesce(max(l.len) FILTER (WHERE l.cls = 'l' AND l.grp = 0), 0)        AS lead_l,
       coalesce(max(l.len) FILTER (WHERE l.cls = 'w' AND l.grp = a.non_w), 0)  AS tail_w,
       coalesce(max(l.len) FILTER (WHERE l.cls = 'l' AND l.grp = a.non_l), 0)  AS tail_l
FROM agg a LEFT JOIN lens l ON l.wallet = a.wallet AND l.day = a.day
GROUP BY ALL
