-- onchainWalletIndex: each (chain, wallet)'s legs as a rowid range of onchain_legs_mem
-- (first rowid, last rowid, count), so the Go index can cut the legs read in rowid order
-- (wallet_index_build.sql) into wallets and check each range is contiguous.
SELECT chain, wallet, min(rowid), max(rowid), count(*)
FROM onchain_legs_mem
GROUP BY chain, wallet;
