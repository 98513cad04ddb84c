-- PerpdexVenueVolume returns the venue's volume in a window (each trade once: its buy
-- side), the venue's fill count, and the first fill of the whole history.
-- $1 start, $2 end (both inclusive). The volume adds exact decimals, not doubles (a
-- parallel double sum depends on the threads' order: see builder_metrics.sql).
SELECT coalesce(sum(CAST(px * sz AS DECIMAL(38, 10))) FILTER (WHERE side = 'B'), 0)::DOUBLE,
       count(*),
       (SELECT min(time) FROM perpdex_fills)
FROM perpdex_fills
WHERE time >= $1::TIMESTAMP AND time <= $2::TIMESTAMP;
