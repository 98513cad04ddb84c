-- PerpdexCohortStyle returns, per wallet, the completed trades of perpdex_closed_trades
-- (the fills reconstruction) that closed strictly before $1 and the sum of their
-- holding times (close_ts - open_ts) in microseconds; the style tag is the mean.
SELECT wallet, count(*) AS trades,
       CAST(sum(epoch_us(close_ts) - epoch_us(open_ts)) AS BIGINT) AS held_us
FROM perpdex_closed_trades
WHERE is_complete AND close_ts < $1::TIMESTAMP
GROUP BY wallet;
