-- PublishOnchainLegs: the legs of one onchain_transfers partition, each transfer once
-- per side: the receiver's leg (dir 1, cp the sender) and the sender's (dir -1, cp the
-- receiver). A self-transfer gives both legs, each with self = true. USD is exact
-- DECIMAL at transfer time, 0 when unpriced (priced = false). The writer sorts by the
-- table's key. $1 chain, $2 date (partition values: only that file is read).
SELECT to_address AS wallet, from_address AS cp, token_address AS token, block_time, 1 AS dir,
       CAST(amount AS DECIMAL(38, 10)) AS amount, CAST(coalesce(usd, 0) AS DECIMAL(38, 6)) AS usd,
       usd IS NOT NULL AS priced, from_address = to_address AS self,
       tx_hash, log_index, block_number
FROM onchain_transfers WHERE chain = $1 AND date = CAST($2 AS DATE)
UNION ALL
SELECT from_address, to_address, token_address, block_time, -1,
       CAST(amount AS DECIMAL(38, 10)), CAST(coalesce(usd, 0) AS DECIMAL(38, 6)),
       usd IS NOT NULL, from_address = to_address,
       tx_hash, log_index, block_number
FROM onchain_transfers WHERE chain = $1 AND date = CAST($2 AS DATE)
