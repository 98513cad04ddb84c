-- onchainLegs (store-local index) materialises every transfer as two legs, one per
-- side, in an in-memory table sorted by chain, wallet and time: the per-wallet routes
-- then read a few row groups (DuckDB zone maps on the sorted wallet column) instead of
-- scanning every Parquet file. dir is 1 for the receiving side and -1 for the sending
-- side; a self-transfer has both legs with self = true. USD is DECIMAL (exact sums) at
-- transfer time, 0 when the token is unpriced (priced = false).
-- This file creates the empty staging table onchain_legs_next (the columns of
-- legs_build_chain.sql's rows); legs_build_chain.sql then inserts one chain at a time,
-- in chain order, each sorted by wallet and time: the table is in (chain, wallet, time)
-- order as with one sort, but only one chain's legs are sorted at once, which lowers
-- the build's peak memory. The Go side then renames it onchain_legs_mem in one
-- transaction, so no query ever sees a partly built table.
CREATE OR REPLACE TABLE onchain_legs_next AS
SELECT chain, to_address AS wallet, from_address AS cp, token_address AS token, block_time, 1 AS dir,
       CAST(amount AS DECIMAL(38, 10)) AS amount, CAST(coalesce(usd, 0) AS DECIMAL(38, 6)) AS usd,
       usd IS NOT NULL AS priced, from_address = to_address AS self,
       tx_hash, log_index, block_number
FROM onchain_transfers
LIMIT 0;
