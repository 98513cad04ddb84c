-- onchainSide: the token metadata the balances route joins (symbol, name, decimals),
-- for the Go balances index.
SELECT chain, token_address, symbol, name, decimals
FROM onchain_tokens_mem;
