-- onchainLegs: the fully built staging legs (legs_build.sql, legs_build_chain.sql)
-- replace onchain_legs_mem, run in one transaction so a query sees the old table or
-- the new one, as with CREATE OR REPLACE.
DROP TABLE IF EXISTS onchain_legs_mem;
ALTER TABLE onchain_legs_next RENAME TO onchain_legs_mem;
