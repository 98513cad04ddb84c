-- PerpdexVenueVolume returns the venue's volume in a window (each trade once: its buy
-- side), the venue's fill count, and the first fill of the whole history.
-- $1 start, $2 end (both inclusive).
SELECT coalesce(sum(px * sz) FILTER (WHERE side = 'B'), 0),
       count(*),
       (SELECT min(time) FROM perpdex_fills)
FROM perpdex_fills
WHERE time >= $1::TIMESTAMP AND time <= $2::TIMESTAMP;
