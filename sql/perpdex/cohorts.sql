-- PerpdexCohorts returns each coin's long and short open interest per hour, split by the
-- holders' cohort on one axis, newest hour first. Hours are the position batches taken
-- exactly on the hour. A position's label is the holder's published hourly label for
-- that hour (point in time), else today's label, else unknown.
-- $1 coin|NULL, $2 axis (size or pnl), $3 start, $4 end (inclusive),
-- $5..$7 keyset (ts, coin, cohort) or NULL, $8 limit, $9 the snapshot of today's labels
-- at the clock (perpdex_cohorts_at), $10 the newest hour labelled by the clock (hours
-- published later read as not yet labelled; query/perpdex_cohorts_at.go).
-- The date conditions beside the time ones let each side open only the window's date
-- partitions (both tables are partitioned by the UTC date of their time column), and
-- the hourly labels are cut to the window before the join, whose hash table was built
-- from every labelled hour of the lake otherwise. Go reads the newest day first and
-- widens the window only while it gives too few groups (query/perpdex_cohorts.go).
WITH p AS (
    SELECT snapshot_ts AS ts, wallet, coin, szi, position_value
    FROM perpdex_positions
    WHERE snapshot_ts >= $3::TIMESTAMP AND snapshot_ts <= $4::TIMESTAMP
      AND date >= CAST($3::TIMESTAMP AS DATE) AND date <= CAST($4::TIMESTAMP AS DATE)
      AND date_trunc('hour', snapshot_ts) = snapshot_ts
      AND ($1::VARCHAR IS NULL OR coin = $1)
), hl AS (
    SELECT hour_ts, wallet, pnl_cohort, size_cohort
    FROM perpdex_cohorts_hourly
    WHERE hour_ts >= $3::TIMESTAMP AND hour_ts <= $4::TIMESTAMP AND hour_ts <= $10::TIMESTAMP
      AND date >= CAST($3::TIMESTAMP AS DATE) AND date <= CAST($4::TIMESTAMP AS DATE)
), l AS (
    SELECT p.ts, p.coin, p.szi, p.position_value,
           coalesce(CASE WHEN $2 = 'pnl' THEN h.pnl_cohort ELSE h.size_cohort END,
                    CASE WHEN $2 = 'pnl' THEN c.pnl_cohort ELSE c.size_cohort END, 'unknown') AS cohort,
           h.wallet IS NOT NULL AS pit
    FROM p
    LEFT JOIN hl h ON h.hour_ts = p.ts AND h.wallet = p.wallet
    LEFT JOIN perpdex_cohorts_at($9::TIMESTAMP) c ON c.wallet = p.wallet
), g AS (
    SELECT ts, coin, cohort,
           -- Summed as exact decimals (each value to 1e-8 USD): a DOUBLE sum's rounding
           -- follows the order it adds in, which depends on DuckDB's threads (a cent
           -- apart between a one-thread and a two-thread store); a decimal sum does not.
           coalesce(sum(position_value::DECIMAL(38, 8)) FILTER (WHERE szi > 0), 0)::DOUBLE AS long_usd,
           coalesce(sum(position_value::DECIMAL(38, 8)) FILTER (WHERE szi < 0), 0)::DOUBLE AS short_usd,
           count(*) FILTER (WHERE szi > 0) AS long_n,
           count(*) FILTER (WHERE szi < 0) AS short_n,
           count(*) FILTER (WHERE pit) AS pit_n,
           count(*) AS n
    FROM l
    GROUP BY ts, coin, cohort
)
SELECT ts, coin, cohort, long_usd, short_usd, long_n, short_n, pit_n, n
FROM g
WHERE $5::TIMESTAMP IS NULL OR ts < $5::TIMESTAMP
   OR (ts = $5::TIMESTAMP AND (coin > $6 OR (coin = $6 AND cohort > $7)))
ORDER BY ts DESC, coin, cohort
LIMIT $8;
