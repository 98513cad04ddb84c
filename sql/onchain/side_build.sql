-- onchainSide (store-local index): in-memory copies of the small on-chain tables the
-- per-wallet and per-token routes join on every request, so no request opens their
-- Parquet files: balances sorted by chain and holder (a wallet's balances sit in one row
-- group), prices sorted by chain, token and hour.
CREATE OR REPLACE TABLE onchain_balances_mem AS
SELECT * FROM onchain_balances ORDER BY chain, address, token_address;
