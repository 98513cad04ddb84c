-- onchainLegs: one chain's legs into onchain_legs_next (created by legs_build.sql),
-- sorted by wallet and time; chains are inserted in name order (legs_chains.sql), so
-- the table is sorted by chain, wallet and time. $1 chain.
INSERT INTO onchain_legs_next
SELECT * FROM (
    SELECT chain, to_address AS wallet, from_address AS cp, token_address AS token, block_time, 1 AS dir,
           CAST(amount AS DECIMAL(38, 10)) AS amount, CAST(coalesce(usd, 0) AS DECIMAL(38, 6)) AS usd,
           usd IS NOT NULL AS priced, from_address = to_address AS self,
           tx_hash, log_index, block_number
    FROM onchain_transfers WHERE chain = $1
    UNION ALL
    SELECT chain, from_address, to_address, token_address, block_time, -1,
           CAST(amount AS DECIMAL(38, 10)), CAST(coalesce(usd, 0) AS DECIMAL(38, 6)),
           usd IS NOT NULL, from_address = to_address,
           tx_hash, log_index, block_number
    FROM onchain_transfers WHERE chain = $1
)
ORDER BY wallet, block_time;
