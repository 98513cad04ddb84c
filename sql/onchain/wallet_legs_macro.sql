-- wallet_legs(w, c, h, r): the legs of wallet w (lower-case 0x address) on chain c ('' for
-- every chain), read from the wallet-clustered layout: the history segment of w's bucket
-- for the dates up to h, its recent segment for the dates after h up to r, and the
-- per-date onchain_legs files for the dates after r (usually today's only). h and r are
-- the split dates of the last publication (onchain/wallet_legs/_sources.json); with both
-- '0001-01-01' every leg comes from onchain_legs. The date bounds also keep a segment
-- file rewritten under a request to its own dates. Same columns as onchain_legs, plus
-- chain.
CREATE OR REPLACE MACRO wallet_legs(w, c, h, r) AS TABLE
SELECT chain, wallet, cp, token, block_time, dir, amount, usd, priced, self, tx_hash, log_index, block_number
FROM onchain_wallet_legs
WHERE bucket = substr(w, 3, 1) AND segment = 'history' AND wallet = w AND (c = '' OR chain = c)
  AND date <= CAST(h AS DATE)
UNION ALL
SELECT chain, wallet, cp, token, block_time, dir, amount, usd, priced, self, tx_hash, log_index, block_number
FROM onchain_wallet_legs
WHERE bucket = substr(w, 3, 1) AND segment = 'recent' AND wallet = w AND (c = '' OR chain = c)
  AND date > CAST(h AS DATE) AND date <= CAST(r AS DATE)
UNION ALL
SELECT chain, wallet, cp, token, block_time, dir, amount, usd, priced, self, tx_hash, log_index, block_number
FROM onchain_legs
WHERE wallet = w AND (c = '' OR chain = c) AND date > CAST(r AS DATE)
