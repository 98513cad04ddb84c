-- wallets/{address}/balances (query/onchain_balance_index.go): the hourly prices of the
-- tokens a request needs and the token cache does not hold, in (token, hour) order so
-- each token's prices are one time-sorted run a request binary-searches for the latest
-- hour at or before now. A NULL price or hour is left out, as arg_max in
-- wallet_balances.sql ignores it.
-- $1 chain, $2 token addresses (VARCHAR[]).
SELECT token_address, epoch_us(hour), price_usd
FROM onchain_prices
WHERE chain = $1 AND list_contains($2, token_address) AND hour IS NOT NULL AND price_usd IS NOT NULL
ORDER BY token_address, hour;
