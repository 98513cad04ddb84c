-- PerpdexStats (next page check) counts hours older than the page's last row ($1) and
-- not older than start ($2).
SELECT count(*) FROM perpdex_venue_stats WHERE ts < $1::TIMESTAMP AND ts >= $2::TIMESTAMP;
