-- PerpdexWalletFunding returns one wallet's funding payments, newest first.
-- $1 wallet, $2 coin|NULL, $3 start, $4 end (inclusive), $5..$6 keyset (time, coin) or
-- NULL, $7 limit.
SELECT time, coin, usdc, szi, funding_rate
FROM perpdex_funding
WHERE wallet = $1
  AND ($2::VARCHAR IS NULL OR coin = $2)
  AND time >= $3::TIMESTAMP AND time <= $4::TIMESTAMP
  AND ($5::TIMESTAMP IS NULL OR time < $5::TIMESTAMP OR (time = $5::TIMESTAMP AND coin > $6))
ORDER BY time DESC, coin
LIMIT $7;
