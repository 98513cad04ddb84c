-- onchainLegs: the fully built staging token-ordered copy (legs_tok_build.sql,
-- legs_tok_build_chain.sql) replaces onchain_legs_tok_mem, in one transaction.
DROP TABLE IF EXISTS onchain_legs_tok_mem;
ALTER TABLE onchain_legs_tok_next RENAME TO onchain_legs_tok_mem;
