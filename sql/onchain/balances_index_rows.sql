-- onchainSide: every balance row for the Go balances index (onchain_balance_index.go),
-- in (chain, holder, token) order so each holder's rows are one run; the time as epoch
-- microseconds.
SELECT chain, address, token_address, balance, epoch_us(as_of)
FROM onchain_balances_mem
ORDER BY chain, address, token_address;
