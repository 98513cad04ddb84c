-- OnchainWalletBalances lists a wallet's current balances on one chain with the token's
-- latest hourly price at or before now and the USD value; a value under min_usd is
-- left out (an unpriced balance counts as 0 USD). Largest value first. Only balances
-- read at or before the clock (as_of <= $3) are known then.
-- $1 chain, $2 address, $3 until (epoch us, inclusive), $4 min USD.
WITH b AS (
    SELECT token_address, balance, as_of
    FROM onchain_balances
    WHERE chain = $1 AND address = $2 AND as_of <= make_timestamp($3) -- read by the clock
),
p AS (
    SELECT token_address, arg_max(price_usd, hour) AS price_usd
    FROM onchain_prices
    WHERE chain = $1 AND hour <= make_timestamp($3) AND token_address IN (SELECT token_address FROM b)
    GROUP BY token_address
)
SELECT b.token_address, coalesce(k.symbol, ''), k.name, k.decimals, b.balance, p.price_usd,
       b.balance * p.price_usd AS value_usd, b.as_of
FROM b
LEFT JOIN p USING (token_address)
LEFT JOIN onchain_tokens_mem k ON k.chain = $1 AND k.token_address = b.token_address
WHERE coalesce(b.balance * p.price_usd, 0) >= $4
ORDER BY value_usd DESC NULLS LAST, b.token_address;
