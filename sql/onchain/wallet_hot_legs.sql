-- OnchainHotLegs: every leg of one wallet on one chain, for the Go cache of the busiest
-- wallets (query/onchain_hot_legs.go), which answers counterparties and compare for
-- them. Sorted by counterparty then token, so the cache gives its counterparties ids in
-- address order and finds a counterparty's distinct tokens in one pass. USD as integer
-- micro-dollars: the legs' exact DECIMAL(38, 6) scaled by 10^6, NULL where it does not
-- fit a BIGINT (the wallet is then left to the SQL).
-- $1 chain, $2 address, $3 and $4 the wallet segments' split dates, $5 the wallet's
-- segment files, $6 the per-date legs files after $4 (Queries.walletArgs).
SELECT cp, token, epoch_us(block_time) AS t, TRY_CAST(usd * 1000000 AS BIGINT) AS usd_micro,
       dir = -1 AS sending, self
FROM wallet_legs($2, $1, $3, $4, $5, $6)
ORDER BY cp, token;
