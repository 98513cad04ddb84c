-- PerpdexHypePrice returns the latest HYPE mark at or before the store clock ($1).
SELECT arg_max(mark_px, time) FROM perpdex_marks WHERE coin = 'HYPE' AND time <= $1::TIMESTAMP;
