-- PerpdexWalletFills returns one wallet's fills, newest first.
-- $1 wallet, $2 coin|NULL, $3 start, $4 end (inclusive), $5..$6 keyset (time, tid) or
-- NULL, $7 limit.
SELECT time, coin, side, dir, px, sz, px * sz, start_position, closed_pnl, fee, fee_token, builder, builder_fee,
       crossed, liquidation, hash, tid
FROM perpdex_fills
WHERE wallet = $1
  AND ($2::VARCHAR IS NULL OR coin = $2)
  AND time >= $3::TIMESTAMP AND time <= $4::TIMESTAMP
  AND ($5::TIMESTAMP IS NULL OR time < $5::TIMESTAMP OR (time = $5::TIMESTAMP AND tid < $6))
ORDER BY time DESC, tid DESC
LIMIT $7;
