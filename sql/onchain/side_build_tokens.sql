-- onchainSide: the in-memory copy of the token metadata.
CREATE OR REPLACE TABLE onchain_tokens_mem AS
SELECT * FROM onchain_tokens ORDER BY chain, token_address;
