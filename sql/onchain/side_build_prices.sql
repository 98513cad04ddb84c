-- onchainSide: the in-memory copy of the hourly prices, sorted by chain, token and hour.
CREATE OR REPLACE TABLE onchain_prices_mem AS
SELECT * FROM onchain_prices ORDER BY chain, token_address, hour;
