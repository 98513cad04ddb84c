-- PerpdexCohortCurrent returns the rows of perpdex_cohorts_current: the labels of
-- every wallet of the account snapshot at $1 (the labels marker is perpdex/cohort_labels.sql
-- run with $1 = $2 = that snapshot), with the style tag from the wallet's completed
-- trades of perpdex_closed_trades (the fills reconstruction) that closed strictly
-- before $1: the mean holding time (close_ts - open_ts, microseconds) compared exactly
-- as held_us < trades x bound. The style marker is a CASE generated from the bounds of
-- query/perpdex_cohort_bands.go (placeholders, bound); NULL without a completed trade.
SELECT l.wallet, l.size_cohort, l.pnl_cohort, l.pnl_cohort_tag,
       __STYLE__ AS style_cohort_tag,
       l.snapshot_ts AS computed_at
FROM (
__LABELS__
) l
LEFT JOIN (
    SELECT wallet, count(*) AS trades,
           CAST(sum(epoch_us(close_ts) - epoch_us(open_ts)) AS BIGINT) AS held_us
    FROM perpdex_closed_trades
    WHERE is_complete AND close_ts < $1::TIMESTAMP
    GROUP BY wallet
) s ON s.wallet = l.wallet
