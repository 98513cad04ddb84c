-- PerpdexCoinExists reports whether a coin has a mark or a fill at or before the clock.
-- $1 coin, $2 store clock.
SELECT EXISTS (SELECT 1 FROM perpdex_marks WHERE coin = $1 AND time <= $2::TIMESTAMP)
    OR EXISTS (SELECT 1 FROM perpdex_fills WHERE coin = $1 AND time <= $2::TIMESTAMP);
