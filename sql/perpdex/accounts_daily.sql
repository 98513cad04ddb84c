-- PerpdexAccountsDaily: one accounts date's equity segments for the perpetuals boards'
-- drawdowns (lake perpdex_accounts_daily; sql/perpdex/board.sql folds a window's
-- complete days from them). $1 the date. Per wallet and day, the day's snapshots in
-- time order split where the day's running peak of account_value rises: one row per
-- segment with its peak and its lowest value, and the day's last snapshot. A drawdown
-- at a snapshot, (peak - value) / peak, falls as value rises, so a segment's largest
-- is at its lowest value, whatever the peak carried from the days before: the board
-- gets the bits of a window function over every snapshot.
WITH a AS (
    SELECT wallet, CAST(snapshot_ts AS DATE) AS day, snapshot_ts, account_value
    FROM perpdex_accounts
    WHERE date = $1::DATE
), s AS (
    SELECT wallet, day, account_value,
           max(account_value) OVER (PARTITION BY wallet, day ORDER BY snapshot_ts
                                    ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS peak,
           max(snapshot_ts) OVER (PARTITION BY wallet, day)                           AS last_ts,
           arg_max(account_value, snapshot_ts) OVER (PARTITION BY wallet, day)        AS last_av
    FROM a
)
SELECT wallet, day, peak, min(account_value) AS low, any_value(last_ts) AS last_ts, any_value(last_av) AS last_av
FROM s
GROUP BY wallet, day, peak
ORDER BY wallet, day, peak
