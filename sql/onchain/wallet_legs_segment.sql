-- PublishOnchainLegs: one segment of onchain_wallet_legs, the legs of one chain and one
-- wallet bucket over a range of dates, read from the published per-date legs (the date
-- range prunes the day files, the wallet range their row groups). The writer sorts by
-- wallet then time. $1 chain, $2 first date (exclusive), $3 last date (inclusive), $4
-- and $5 the bucket's wallet range [lo, hi).
SELECT wallet, cp, token, block_time, dir, amount, usd, priced, self, tx_hash, log_index, block_number, date
FROM onchain_legs
WHERE chain = $1 AND date > CAST($2 AS DATE) AND date <= CAST($3 AS DATE)
  AND wallet >= $4 AND wallet < $5
