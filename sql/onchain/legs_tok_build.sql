-- onchainLegs (store-local index): a token-ordered copy of the legs' columns the
-- per-token routes (transfers, holders) read, sorted by chain, token and time, so a
-- token's legs sit in a few row groups (DuckDB zone maps on the sorted token column)
-- instead of being spread over every wallet's. This file creates it empty as the staging
-- table onchain_legs_tok_next; legs_tok_build_chain.sql fills it one chain at a time (a
-- smaller sort each) and the Go side renames it onchain_legs_tok_mem in one transaction.
CREATE OR REPLACE TABLE onchain_legs_tok_next AS
SELECT chain, token, wallet, dir, amount, usd, self, block_time
FROM onchain_legs_mem
LIMIT 0;
