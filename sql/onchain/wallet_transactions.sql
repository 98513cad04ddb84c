-- OnchainWalletTransactions lists a wallet's transfers on one chain, newest first, over
-- the days ending now, resuming strictly after a keyset cursor. Reads the wallet's legs
-- (a self-transfer is listed once, from its receiving leg).
-- $1 chain, $2 address, $3 since (epoch us, exclusive), $4 until (epoch us, inclusive),
-- $5 token filter ('' for every token), $6 min USD (unpriced transfers count as 0),
-- $7 has cursor, $8 cursor block time (epoch us), $9 cursor log index, $10 cursor tx
-- hash, $11 row count, $12 and $13 the wallet segments' split dates, $14 the wallet's
-- segment files, $15 the per-date legs files after $13 (Queries.walletArgs).
-- The page is cut from the legs first, then joined to the token symbols and shaped: a
-- hub's 30 days are about 75,000 legs, which the join and the casts no longer touch.
WITH l AS (
    SELECT chain, wallet, cp, token, block_time, dir, amount, usd, priced, tx_hash, log_index, block_number
    FROM wallet_legs($2, $1, $12, $13, $14, $15)
    WHERE block_time > make_timestamp($3) AND block_time <= make_timestamp($4)
      AND NOT (self AND dir = -1)
      AND ($5 = '' OR token = $5)
      AND usd >= $6
      AND (NOT $7 OR epoch_us(block_time) < $8
           OR (epoch_us(block_time) = $8 AND (log_index < $9 OR (log_index = $9 AND tx_hash < $10))))
    ORDER BY block_time DESC, log_index DESC, tx_hash DESC
    LIMIT $11
)
SELECT l.tx_hash, l.block_number, epoch_us(l.block_time) AS bt, l.log_index, l.token,
       coalesce(k.symbol, ''),
       CASE WHEN l.dir = 1 THEN l.cp ELSE l.wallet END AS from_address,
       CASE WHEN l.dir = 1 THEN l.wallet ELSE l.cp END AS to_address,
       l.amount::DOUBLE, CASE WHEN l.priced THEN l.usd::DOUBLE END
FROM l
LEFT JOIN onchain_tokens_mem k ON k.chain = l.chain AND k.token_address = l.token
ORDER BY l.block_time DESC, l.log_index DESC, l.tx_hash DESC
LIMIT $11;
