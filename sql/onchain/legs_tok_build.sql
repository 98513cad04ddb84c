-- onchainLegs (store-local index): a token-ordered copy of the legs' columns the
-- per-token routes (transfers, holders) read, sorted by chain, token and time, so a
-- token's legs sit in a few row groups (DuckDB zone maps on the sorted token column)
-- instead of being spread over every wallet's.
CREATE OR REPLACE TABLE onchain_legs_tok_mem AS
SELECT chain, token, wallet, dir, amount, usd, self, block_time
FROM onchain_legs_mem
ORDER BY chain, token, block_time;
