-- onchainWalletIndex (the Go per-wallet index) numbers every address (kind 'a': wallets
-- and counterparties), token ('t') and chain ('c') of the legs, each kind in byte
-- order from 0, in a small in-memory table the chunked leg reads join
-- (wallet_index_build.sql); comparing two address ids compares the addresses (the
-- routes' "ties on address"). The Go side reads it back with wallet_index_names.sql.
CREATE OR REPLACE TABLE onchain_ids_mem AS
SELECT kind, v, (row_number() OVER (PARTITION BY kind ORDER BY v) - 1)::BIGINT AS id
FROM (
    SELECT 'a' AS kind, v FROM (SELECT wallet AS v FROM onchain_legs_mem UNION SELECT cp FROM onchain_legs_mem)
    UNION ALL
    SELECT 't', v FROM (SELECT DISTINCT token AS v FROM onchain_legs_mem)
    UNION ALL
    SELECT 'c', v FROM (SELECT DISTINCT chain AS v FROM onchain_legs_mem)
);
