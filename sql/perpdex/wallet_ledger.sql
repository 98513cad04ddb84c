-- PerpdexWalletLedger returns one wallet's deposits, withdrawals and sends, newest first.
-- $1 wallet, $2 start, $3 end (inclusive), $4..$5 keyset (time, hash) or NULL, $6 limit.
SELECT time, kind, usdc, counterparty, hash
FROM perpdex_ledger
WHERE wallet = $1
  AND time >= $2::TIMESTAMP AND time <= $3::TIMESTAMP
  AND ($4::TIMESTAMP IS NULL OR time < $4::TIMESTAMP OR (time = $4::TIMESTAMP AND hash < $5))
ORDER BY time DESC, hash DESC
LIMIT $6;
