-- onchainWalletIndex: the columns the transactions route lists beside the Go index's
-- integers, for the legs with rowid in [$1, $2) (read in chunks, as
-- wallet_index_build.sql): the transaction hash as four 64-bit words (its 64 hex
-- digits, 16 at a time, so the Go side allocates no string per leg; NULL when a word
-- is not hex, and ok false unless the hash is 0x and 64 lower-case digits: the Go side
-- then leaves the route to its SQL), block number, log index, the amount as the route's
-- SQL returns it (the DECIMAL leg amount as DOUBLE) and whether the transfer had a USD
-- price.
SELECT rowid,
       TRY_CAST('0x' || substr(tx_hash, 3, 16) AS UBIGINT) AS h0,
       TRY_CAST('0x' || substr(tx_hash, 19, 16) AS UBIGINT) AS h1,
       TRY_CAST('0x' || substr(tx_hash, 35, 16) AS UBIGINT) AS h2,
       TRY_CAST('0x' || substr(tx_hash, 51, 16) AS UBIGINT) AS h3,
       length(tx_hash) = 66 AND starts_with(tx_hash, '0x') AND lower(tx_hash) = tx_hash AS ok,
       block_number, log_index, amount::DOUBLE, priced
FROM onchain_legs_mem
WHERE rowid >= $1 AND rowid < $2;
