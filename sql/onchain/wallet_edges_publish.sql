-- PublishOnchainLegs: one file of onchain_wallet_edges, the legs of one chain and one
-- wallet bucket whose block_time falls on an edge day of the serving date, read from the
-- per-date legs files dated up to the version's R (edgesPlan) that can hold such a leg
-- (Queries.publishWalletEdges picks them by their block_time range; the wallet range
-- prunes their row groups, sorted by wallet). The writer sorts by wallet then time.
-- $1 the files, $2 the edge days, $3 and $4 the bucket's wallet range
-- [lo, hi).
SELECT wallet, cp, token, block_time, dir, amount, usd, priced, self, tx_hash, log_index, block_number
FROM read_parquet($1)
WHERE wallet >= $3 AND wallet < $4
  AND list_contains(CAST($2 AS DATE[]), CAST(block_time AS DATE))
