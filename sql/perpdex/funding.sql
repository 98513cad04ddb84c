-- PerpdexFunding returns the venue's hourly funding rates per coin, newest first: the
-- rate applied on each hour and how many positions paid or received it.
-- $1 coin|NULL, $2 start, $3 end (inclusive), $4..$5 keyset (time, coin) or NULL, $6 limit.
SELECT time, coin, max(funding_rate) AS rate, count(*) AS positions
FROM perpdex_funding
WHERE ($1::VARCHAR IS NULL OR coin = $1)
  AND time >= $2::TIMESTAMP AND time <= $3::TIMESTAMP
  AND ($4::TIMESTAMP IS NULL OR time < $4::TIMESTAMP OR (time = $4::TIMESTAMP AND coin > $5))
GROUP BY time, coin
ORDER BY time DESC, coin
LIMIT $6;
