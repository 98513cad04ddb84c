-- wallets/{address}/balances (query/onchain_balance_index.go): one holder's balance
-- rows, the time as epoch microseconds. onchain_balances is sorted by chain and
-- holder, so DuckDB reads the one row group holding them.
-- $1 chain, $2 address.
SELECT token_address, balance, epoch_us(as_of)
FROM onchain_balances
WHERE chain = $1 AND address = $2
ORDER BY token_address;
