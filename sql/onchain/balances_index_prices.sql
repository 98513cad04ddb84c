-- onchainSide: every hourly price for the Go balances index, in (chain, token, hour)
-- order so each token's prices are one time-sorted run a request binary-searches for
-- the latest hour at or before now. A NULL price or hour is left out, as arg_max in
-- wallet_balances.sql ignores it.
SELECT chain, token_address, epoch_us(hour), price_usd
FROM onchain_prices_mem
WHERE hour IS NOT NULL AND price_usd IS NOT NULL
ORDER BY chain, token_address, hour;
