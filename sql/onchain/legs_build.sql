-- onchainLegs (store-local index) materialises every transfer as two legs, one per
-- side, in an in-memory table sorted by wallet, chain and time: the per-wallet routes
-- then read a few row groups (DuckDB zone maps on the sorted wallet column) instead of
-- scanning every Parquet file. dir is 1 for the receiving side and -1 for the sending
-- side; a self-transfer has both legs with self = true. USD is DECIMAL (exact sums) at
-- transfer time, 0 when the token is unpriced (priced = false).
CREATE OR REPLACE TABLE onchain_legs_mem AS
SELECT * FROM (
    SELECT chain, to_address AS wallet, from_address AS cp, token_address AS token, block_time, 1 AS dir,
           CAST(amount AS DECIMAL(38, 10)) AS amount, CAST(coalesce(usd, 0) AS DECIMAL(38, 6)) AS usd,
           usd IS NOT NULL AS priced, from_address = to_address AS self,
           tx_hash, log_index, block_number
    FROM onchain_transfers
    UNION ALL
    SELECT chain, from_address, to_address, token_address, block_time, -1,
           CAST(amount AS DECIMAL(38, 10)), CAST(coalesce(usd, 0) AS DECIMAL(38, 6)),
           usd IS NOT NULL, from_address = to_address,
           tx_hash, log_index, block_number
    FROM onchain_transfers
)
ORDER BY chain, wallet, block_time;
