-- onchainLegs: one chain's rows of onchain_legs_tok_next (legs_tok_build.sql), sorted by
-- token and time; chains come in name order, so the copy is sorted by chain, token and
-- time. $1 chain.
INSERT INTO onchain_legs_tok_next
SELECT chain, token, wallet, dir, amount, usd, self, block_time
FROM onchain_legs_mem
WHERE chain = $1
ORDER BY token, block_time;
