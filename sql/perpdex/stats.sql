-- PerpdexStats returns hourly venue statistics, newest first.
-- $1 lower bound (inclusive), $2 upper bound (inclusive), $3 limit.
SELECT ts, total_perp_equity, count_wallets, count_open_positions, count_long, count_short,
       open_interest, open_interest_long, open_interest_short, count_positions_in_profit
FROM perpdex_venue_stats
WHERE ts >= $1::TIMESTAMP AND ts <= $2::TIMESTAMP
ORDER BY ts DESC
LIMIT $3;
