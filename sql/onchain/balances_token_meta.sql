-- wallets/{address}/balances (query/onchain_balance_index.go): the metadata (symbol,
-- name, decimals) of the tokens a request needs and the token cache does not hold.
-- $1 chain, $2 token addresses (VARCHAR[]).
SELECT token_address, symbol, name, decimals
FROM onchain_tokens_mem
WHERE chain = $1 AND list_contains($2, token_address);
